"""Process group setup and the data-parallel wrappers (DDP or FSDP2), read from torchrun's environment."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.device_mesh import DeviceMesh, init_device_mesh
from torch.distributed.fsdp import FSDPModule, fully_shard
from torch.distributed.tensor import DTensor
from torch.nn.parallel import DistributedDataParallel

from pretrain_core.train.config import TrainConfig
from pretrain_core.train.model.gpt import GPT
from pretrain_core.train.model.moe import moe_layers
from pretrain_core.train.parallel.compression import compress_gradients
from pretrain_core.train.parallel.expert_parallel import expert_gradients, shard_experts
from pretrain_core.train.parallel.layout import MESH_DIMS, Layout
from pretrain_core.train.parallel.tensor_parallel import apply_tensor_parallel


@dataclass(frozen=True)
class DistEnv:
    """This process's place: rank and device, and when the model is split (tensor or pipeline parallelism) its
    coordinates on the (pp, dp, cp, tp) device mesh, rank = ((pp_rank x dp + dp_rank) x cp + cp_rank) x tp +
    tp_rank: the ranks of a tensor-parallel group are neighbours, and every rank of one pipeline, tensor and
    context group reads the same batch."""

    rank: int
    local_rank: int
    world_size: int
    device: torch.device
    layout: Layout | None = None  # None: every rank holds the whole model
    mesh: DeviceMesh | None = None  # MESH_DIMS, built from the layout

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def tp_size(self) -> int:
        return self.layout.tp if self.layout else 1

    @property
    def pp_size(self) -> int:
        return self.layout.pp if self.layout else 1

    @property
    def dp_size(self) -> int:
        return self.layout.dp if self.layout else self.world_size

    @property
    def dp_rank(self) -> int:
        if self.layout is None:
            return self.rank
        return self.rank // (self.layout.cp * self.layout.tp) % self.layout.dp

    @property
    def tp_rank(self) -> int:
        return self.rank % self.tp_size

    @property
    def cp_size(self) -> int:
        return self.layout.cp if self.layout else 1

    @property
    def cp_rank(self) -> int:
        return self.rank // self.tp_size % self.cp_size

    @property
    def pp_rank(self) -> int:
        return self.rank // (self.world_size // self.pp_size)

    @property
    def loss_ranks(self) -> int:
        """Ranks that compute the loss: all of them, or those holding the pipeline's last stage."""
        return self.world_size // self.pp_size


def init_distributed(backend: str, timeout_s: float = 1800.0, layout: Layout | None = None) -> DistEnv:
    """Join the process group when launched by torchrun with WORLD_SIZE > 1; otherwise run single-process.

    `auto` picks NCCL when CUDA is present (one GPU per local rank) and gloo on CPU. A ``layout`` with more than
    data parallelism puts the ranks on a (pp, dp, cp, tp) device mesh.
    """
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    use_cuda = torch.cuda.is_available() and backend != "gloo"
    device = torch.device("cuda", local_rank) if use_cuda else torch.device("cpu")
    if use_cuda:
        torch.cuda.set_device(device)
    if world_size > 1 and not dist.is_initialized():
        chosen = backend if backend != "auto" else ("nccl" if use_cuda else "gloo")
        dist.init_process_group(chosen, timeout=timedelta(seconds=timeout_s), device_id=device if use_cuda else None)
    if layout is None or layout.world_size == layout.dp:
        return DistEnv(rank=rank, local_rank=local_rank, world_size=world_size, device=device)
    if layout.world_size != world_size or layout.problems():
        raise ValueError(f"layout {layout} does not fit the {world_size} ranks torchrun started")
    mesh = init_device_mesh(device.type, layout.mesh_shape, mesh_dim_names=MESH_DIMS)
    return DistEnv(rank, local_rank, world_size, device, layout, mesh)


def cleanup_distributed() -> None:
    if dist.is_initialized():
        dist.destroy_process_group()


def wrap_model(model: GPT, config: TrainConfig, env: DistEnv) -> nn.Module:
    """DDP replicates the model (its gradient all-reduce compressed as configured); FSDP2 shards each block (then
    the root: embeddings, final norm) across ranks; either averages gradients over every rank, context-parallel
    ones included (each holds a mean over as many tokens). With tensor parallelism the blocks are split over each
    tensor-parallel group first, then FSDP2 shards over the data-parallel dimension of the mesh (2-D), when there
    is one. A mixture of experts counts its expert loads over every rank, and under expert parallelism each rank
    keeps its experts, which DDP leaves to `sync_expert_gradients`."""
    if env.tp_size > 1 or env.pp_size > 1:
        shard_on_mesh(model, env)
        return model
    if env.world_size == 1:
        return model
    for layer in moe_layers(model):
        layer.count_group = dist.group.WORLD
    if config.parallelism.expert_parallel > 1:
        experts = shard_experts(model, config.parallelism.expert_parallel, env.device)
        DistributedDataParallel._set_params_and_buffers_to_ignore_for_model(model, experts)
    if config.parallelism.strategy == "fsdp":
        for block in model.blocks.values():
            fully_shard(block)
        fully_shard(model)
        return model
    replicated = DistributedDataParallel(model, device_ids=[env.local_rank] if env.device.type == "cuda" else None)
    compress_gradients(
        replicated,
        config.parallelism.gradient_compression,
        config.parallelism.powersgd_rank,
        config.parallelism.powersgd_start_step,
    )
    return replicated


def shard_on_mesh(model: GPT, env: DistEnv) -> None:
    """Split ``model`` (the whole model or a pipeline stage) over the tensor-parallel group, then shard it with
    FSDP2 over the ranks holding replicas of it: the data-parallel ones and, under context parallelism, the ranks
    of each context group too (each holds the mean over its part of the sequences, so the FSDP average over dp x cp
    is the whole batch's mean: torchtitan's dp_shard_cp)."""
    assert env.mesh is not None
    if env.tp_size > 1:
        apply_tensor_parallel(model, env.mesh["tp"])
    if env.dp_size * env.cp_size > 1:
        replicas = env.mesh["dp"] if env.cp_size == 1 else env.mesh["dp", "cp"]._flatten("dp_cp")
        for layer in moe_layers(model):
            layer.count_group = replicas.get_group()  # expert loads over every replica's tokens, as unsplit
        for block in model.blocks.values():
            fully_shard(block, mesh=replicas)
        fully_shard(model, mesh=replicas)


def reshard(model: nn.Module) -> None:
    """Free FSDP2's gathered parameters: after a forward without backward (validation) the root keeps its weights
    gathered, and state dicts taken then name other tensors than the optimizer holds."""
    for module in model.modules():
        if isinstance(module, FSDPModule):
            module.reshard()


@contextmanager
def gradient_sync(model: nn.Module, enabled: bool) -> Iterator[None]:
    """Skip the gradient all-reduce on non-final micro-steps of an accumulation (DDP no_sync / FSDP2 equivalent)."""
    if isinstance(model, DistributedDataParallel) and not enabled:
        with model.no_sync():
            yield
    elif isinstance(model, FSDPModule):
        model.set_requires_gradient_sync(enabled)
        yield
    else:
        yield


def clip_grad_norm(
    model: nn.Module, max_norm: float, group: dist.ProcessGroup | None = None, uncounted: frozenset[int] = frozenset()
) -> float:
    """Global gradient L2 norm before clipping (DTensor-aware); max_norm 0 measures without clipping.

    FSDP's gradients are all DTensors on one mesh and plain DDP's all tensors: torch's fused norm handles either.
    Tensor parallelism mixes them (sharded blocks, replicated embeddings and norms; on a 2-D mesh, DTensors of two
    meshes), which torch's foreach kernels refuse, so then each gradient's norm is taken on its own (a sharded one
    summed over its group). Under pipeline parallelism each rank holds some layers: the squares are summed over
    the pipeline ``group``, and the ``uncounted`` parameters (by id: a second copy of a tied weight) left out.
    Under expert parallelism each rank holds some experts: their squares are summed over the expert group."""
    params = [p for p in model.parameters() if p.grad is not None]
    held_experts, expert_shard = expert_gradients(model)
    expert_ids = {id(g) for g in held_experts}
    grads = [p.grad for p in params if id(p) not in uncounted and p.grad is not None and id(p.grad) not in expert_ids]
    layouts = {g.device_mesh if isinstance(g, DTensor) else None for g in grads}  # None: a plain tensor
    if len(layouts) < 2 and grads:
        norm = torch.nn.utils.get_total_norm(grads)
        square = float(norm.full_tensor() if isinstance(norm, DTensor) else norm) ** 2
    else:
        square = 0.0
        for grad in grads:
            norm = torch.linalg.vector_norm(grad)
            square += float(norm.full_tensor() if isinstance(norm, DTensor) else norm) ** 2
    if group is not None:
        summed = torch.tensor([square], dtype=torch.float64, device=params[0].device if params else None)
        dist.all_reduce(summed, group=group)
        square = float(summed)
    if expert_shard is not None:
        experts = torch.nn.utils.get_total_norm(held_experts).double().square().reshape(1)
        dist.all_reduce(experts, group=expert_shard.group)
        square += float(experts)
    total = square**0.5
    if max_norm > 0 and total > max_norm:
        for param in params:
            assert param.grad is not None
            param.grad.mul_(max_norm / (total + 1e-6))
    return total


def all_reduce_sum(values: list[float], env: DistEnv) -> list[float]:
    """Sum a few scalars over all ranks (float64, so loss sums over many tokens stay exact enough)."""
    if env.world_size == 1:
        return values
    tensor = torch.tensor(values, dtype=torch.float64, device=env.device)
    dist.all_reduce(tensor)
    return tensor.tolist()
