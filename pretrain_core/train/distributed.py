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
from torch.distributed.fsdp import FSDPModule, fully_shard
from torch.distributed.tensor import DTensor
from torch.nn.parallel import DistributedDataParallel

from pretrain_core.train.model import GPT


@dataclass(frozen=True)
class DistEnv:
    rank: int
    local_rank: int
    world_size: int
    device: torch.device

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def init_distributed(backend: str, timeout_s: float = 1800.0) -> DistEnv:
    """Join the process group when launched by torchrun with WORLD_SIZE > 1; otherwise run single-process.

    `auto` picks NCCL when CUDA is present (one GPU per local rank) and gloo on CPU.
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
    return DistEnv(rank=rank, local_rank=local_rank, world_size=world_size, device=device)


def cleanup_distributed() -> None:
    if dist.is_initialized():
        dist.destroy_process_group()


def wrap_model(model: GPT, strategy: str, env: DistEnv) -> nn.Module:
    """DDP replicates the model; FSDP2 shards each block (then the root: embeddings, final norm) across ranks."""
    if env.world_size == 1:
        return model
    if strategy == "fsdp":
        for block in model.blocks:
            fully_shard(block)
        fully_shard(model)
        return model
    return DistributedDataParallel(model, device_ids=[env.local_rank] if env.device.type == "cuda" else None)


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


def clip_grad_norm(model: nn.Module, max_norm: float) -> float:
    """Global gradient L2 norm before clipping (DTensor-aware under FSDP); max_norm 0 measures without clipping."""
    params = [p for p in model.parameters() if p.grad is not None]
    norm = torch.nn.utils.clip_grad_norm_(params, max_norm if max_norm > 0 else float("inf"))
    if isinstance(norm, DTensor):
        norm = norm.full_tensor()
    return float(norm)


def all_reduce_sum(values: list[float], env: DistEnv) -> list[float]:
    """Sum a few scalars over all ranks (float64, so loss sums over many tokens stay exact enough)."""
    if env.world_size == 1:
        return values
    tensor = torch.tensor(values, dtype=torch.float64, device=env.device)
    dist.all_reduce(tensor)
    return tensor.tolist()


def any_rank(flag: bool, env: DistEnv) -> bool:
    """True on every rank when it is true on at least one (e.g. one rank received SIGTERM)."""
    return all_reduce_sum([float(flag)], env)[0] > 0
