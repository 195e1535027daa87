"""Expert parallelism: the experts of each mixture-of-experts layer are spread over a group of data-parallel ranks,
and the tokens each rank routes travel to their experts' rank and back by all-to-all (GShard, DeepSpeed-MoE,
torchtitan).

The ranks are laid out as (replica, ep): rank r holds experts [ep_rank x E/ep, (ep_rank + 1) x E/ep), ep_rank = r
mod ep; ranks with the same ep_rank hold the same experts (replicas). DDP leaves the expert weights alone: their
gradient already sums what every rank of the expert group sent, so after backward it is summed over the replicas
and divided by the data-parallel size, which makes it the same mean over the global batch as DDP's. Every rank
builds the whole model from the seed and drops the experts it does not hold, so names and initial weights are
the unsplit model's, and checkpoints hold each expert once, under its own name.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed._functional_collectives import all_to_all_single_autograd
from torch.distributed.device_mesh import init_device_mesh

from pretrain_core.train.model.moe import moe_layers

log = logging.getLogger(__name__)
EXPERT_MESH_DIMS = ("replica", "ep")


@dataclass(frozen=True)
class ExpertShard:
    """One rank's place in expert parallelism: its expert group, the replicas of its experts, and the
    data-parallel size that gradients are averaged over."""

    group: dist.ProcessGroup  # the ranks a layer's experts are spread over
    replicas: dist.ProcessGroup | None  # the ranks holding the same experts (None: no other)
    size: int  # ranks in the expert group
    data_parallel: int  # ranks averaging gradients

    def exchange(
        self,
        rows: torch.Tensor,
        per_expert: torch.Tensor,
        run_local: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    ) -> torch.Tensor:
        """Send ``rows`` (this rank's routed tokens, ordered by expert, ``per_expert`` of each of all E experts)
        to the ranks holding their experts, run ``run_local`` on what arrives, and bring the outputs back in the
        order sent. Both exchanges are differentiable: the backward sends the gradients the other way."""
        local = len(per_expert) // self.size
        received_per_expert = torch.empty_like(per_expert)
        dist.all_to_all_single(received_per_expert, per_expert, group=self.group)  # (source rank, local expert)
        sent = per_expert.view(self.size, local).sum(dim=1).tolist()
        received_counts = received_per_expert.view(self.size, local)
        received = all_to_all_single_autograd(rows, received_counts.sum(dim=1).tolist(), sent, self.group)
        expert_of_row = torch.arange(local, device=rows.device).repeat(self.size)
        expert_of_row = expert_of_row.repeat_interleave(received_per_expert.to(rows.device))
        order = expert_of_row.sort(stable=True).indices  # from (source, expert) order to expert order
        outputs = run_local(received[order], received_counts.sum(dim=0))
        unsorted = torch.zeros_like(outputs).index_copy(0, order, outputs)
        return all_to_all_single_autograd(unsorted, sent, received_counts.sum(dim=1).tolist(), self.group)


def shard_experts(model: nn.Module, expert_parallel: int, device: torch.device) -> list[str]:
    """Keep this rank's experts in every MoE layer of ``model`` and give the layers their `ExpertShard`; return
    the names of the parameters DDP must leave alone (the experts')."""
    world = dist.get_world_size()
    mesh = init_device_mesh(device.type, (world // expert_parallel, expert_parallel), mesh_dim_names=EXPERT_MESH_DIMS)
    replicas = mesh["replica"].get_group() if world > expert_parallel else None
    shard = ExpertShard(mesh["ep"].get_group(), replicas, expert_parallel, world)
    layers = moe_layers(model)
    local = len(layers[0].experts) // expert_parallel
    first = mesh["ep"].get_local_rank() * local
    held = {str(e) for e in range(first, first + local)}
    for layer in layers:
        for name in [name for name in layer.experts if name not in held]:
            del layer.experts[name]
        layer.shard = shard
    log.info("rank %d holds experts %d-%d of each MoE layer", dist.get_rank(), first, first + local - 1)
    return [name for name, _ in model.named_parameters() if ".experts." in name]


def expert_gradients(model: nn.Module) -> tuple[list[torch.Tensor], ExpertShard | None]:
    """The gradients of the experts this rank holds under expert parallelism, and their shard (none without)."""
    layers = [layer for layer in moe_layers(model) if layer.shard is not None]
    grads = [p.grad for layer in layers for p in layer.experts.parameters() if p.grad is not None]
    return grads, layers[0].shard if layers else None


def sync_expert_gradients(model: nn.Module) -> None:
    """Make each expert's gradient the data-parallel mean that DDP gives every other weight: summed over the
    replicas holding the expert, divided by the data-parallel size."""
    grads, shard = expert_gradients(model)
    if shard is None:
        return
    for grad in grads:
        if shard.replicas is not None:
            dist.all_reduce(grad, group=shard.replicas)
        grad.div_(shard.data_parallel)
