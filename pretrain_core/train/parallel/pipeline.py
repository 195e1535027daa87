"""Pipeline parallelism with torch.distributed.pipelining: the blocks are cut into stages, each rank of a pipeline
holds its stages (the first also the embedding, the last the final norm, the head and the loss), and a schedule
(GPipe, 1F1B, Interleaved 1F1B, zero-bubble) passes microbatches' activations forward and their gradients back.

Every rank builds the whole model from the same seed, then keeps its parts (`model_part`): parameters keep their
names and initial values, so checkpoints hold the same names as unsplit runs and a run split any way starts from
the weights an unsplit one does. The embedding and the head are one tied matrix: the first and the last stage each
hold a copy, and their gradients are summed across the two ranks before the update (Megatron's embedding group),
so both copies take identical steps. Each stage is split further by tensor parallelism and sharded by FSDP2 over
the data-parallel replicas (`shard_on_mesh`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import product
from typing import Any

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.pipelining import (
    PipelineStage,
    Schedule1F1B,
    ScheduleGPipe,
    ScheduleInterleaved1F1B,
    ScheduleInterleavedZeroBubble,
)
from torch.distributed.tensor import DTensor

from pretrain_core.train.config import TrainConfig
from pretrain_core.train.model.gpt import GPT, cross_entropy
from pretrain_core.train.parallel.distributed import DistEnv, clip_grad_norm, reshard, shard_on_mesh
from pretrain_core.train.parallel.layout import LOOPED_SCHEDULES, split_layers, stages_per_rank

SCHEDULES: dict[str, type[Any]] = {
    "gpipe": ScheduleGPipe,
    "1f1b": Schedule1F1B,
    "interleaved-1f1b": ScheduleInterleaved1F1B,
    "zero-bubble": ScheduleInterleavedZeroBubble,
}


def model_part(model: GPT, layers: Sequence[int], first: bool, last: bool) -> GPT:
    """A view of ``model`` keeping only ``layers`` (and the embedding if ``first``, the norm and head if
    ``last``): it shares the kept modules, parameters and buffers, so names and values are the model's."""
    part = GPT.__new__(GPT)
    part.__dict__.update(
        {key: value.copy() if isinstance(value, dict) else value for key, value in vars(model).items()}
    )
    part.blocks = nn.ModuleDict({str(layer): model.blocks[str(layer)] for layer in layers})
    if not first:
        part.embed, part.pos_embed = None, None
    if not last:
        part.norm, part.lm_head = None, None
    return part


class ScaledLoss:
    """The schedule's loss per microbatch: mean next-token loss over ``divisor`` (the microbatches and
    accumulation steps of an optimizer step, so the summed gradients are the batch mean's; 1 to read losses)."""

    def __init__(self) -> None:
        self.divisor = 1.0

    def __call__(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return cross_entropy(logits, targets) / self.divisor


@dataclass
class Pipeline:
    """This rank's share of a pipeline: its stage modules, the schedule that runs them, and ``rank_model``, every
    part as one module under the original names (what the optimizer steps and checkpoints save)."""

    schedule: Any
    parts: list[GPT]
    rank_model: GPT
    first: bool  # this rank holds the first stage: it feeds the token ids
    last: bool  # this rank holds the last stage: it has the targets and the loss
    group: dist.ProcessGroup
    tied_group: dist.ProcessGroup | None  # this rank and the one with the other copy of the tied embedding
    microbatches: int
    loss: ScaledLoss

    def forward_backward(self, inputs: torch.Tensor, targets: torch.Tensor, accumulation: int) -> float:
        """Run the schedule over one micro-batch; gradients accumulate. Returns its mean loss / ``accumulation``
        on the last stage, 0 elsewhere."""
        self.loss.divisor = float(self.microbatches * accumulation)
        losses: list[torch.Tensor] = []
        self._run(self.schedule.step, inputs, targets, losses)
        return float(sum(loss.item() for loss in losses))

    def loss_sum(self, inputs: torch.Tensor, targets: torch.Tensor) -> float:
        """Forward only: the summed next-token loss of the batch on the last stage, 0 elsewhere."""
        self.loss.divisor = 1.0
        losses: list[torch.Tensor] = []
        self._run(self.schedule.eval, inputs, targets, losses)
        return float(sum(loss.item() for loss in losses)) * targets.numel() / self.microbatches

    def _run(self, run: Any, inputs: torch.Tensor, targets: torch.Tensor, losses: list[torch.Tensor]) -> None:
        args = (inputs,) if self.first else ()
        if self.last:
            run(*args, target=targets, losses=losses)
        else:
            run(*args)

    def sync_tied_gradients(self) -> None:
        """Sum the gradients of the two copies of the tied embedding (first and last stage), so both take the step
        the unsplit model's one matrix does."""
        if self.tied_group is None:
            return
        weight = self._tied_weight()
        grad = weight.grad
        if grad is None:
            grad = weight.grad = torch.zeros_like(weight)
        dist.all_reduce(grad.to_local() if isinstance(grad, DTensor) else grad, group=self.tied_group)

    def clip_grad_norm(self, max_norm: float) -> float:
        """The whole model's gradient norm (each stage's squares summed over the pipeline, the tied matrix counted
        once), clipped to ``max_norm``."""
        uncounted = frozenset({id(self._tied_weight())}) if self.last and self.tied_group is not None else frozenset()
        return clip_grad_norm(self.rank_model, max_norm, self.group, uncounted)

    def _tied_weight(self) -> torch.Tensor:
        if self.first:
            embed = self.parts[0].embed
            assert embed is not None
            return embed.weight
        head = self.parts[-1].lm_head
        assert head is not None
        return head.weight

    def set_training(self, training: bool) -> None:
        for part in self.parts:
            part.train(training)

    def reshard(self) -> None:
        """FSDP2 keeps a stage's root weights gathered after forward-only passes: free them (before a save)."""
        for part in self.parts:
            reshard(part)


def _tied_groups(env: DistEnv) -> dist.ProcessGroup | None:
    """Collective (every rank creates every group): for each (dp, cp, tp) coordinate, the group of its first- and
    last-stage ranks; returns this rank's, or None in the middle of the pipeline."""
    assert env.mesh is not None
    ranks = env.mesh.mesh
    mine = None
    for dp, cp, tp in product(*(range(size) for size in ranks.shape[1:])):
        pair = [int(ranks[0, dp, cp, tp]), int(ranks[-1, dp, cp, tp])]
        group = dist.new_group(pair)
        if env.rank in pair:
            mine = group
    return mine


def build_pipeline(model: GPT, config: TrainConfig, env: DistEnv) -> Pipeline:
    """Collective: cut ``model`` into the configured stages, keep this rank's (stage r, r + pp, ... for the looped
    schedules), split and shard them on the mesh, and wrap them in the schedule."""
    assert env.mesh is not None
    pp = env.pp_size
    per_rank = stages_per_rank(config.parallelism.pipeline_schedule, config.parallelism.pipeline_virtual_stages)
    n_stages = pp * per_rank
    ranges = split_layers(model.args.n_layer, n_stages, config.parallelism.pipeline_layers_per_stage)
    stage_ids = [env.pp_rank + pp * i for i in range(per_rank)]
    first, last = 0 in stage_ids, n_stages - 1 in stage_ids
    parts = [model_part(model, ranges[stage], stage == 0, stage == n_stages - 1) for stage in stage_ids]
    rank_model = model_part(model, [layer for stage in stage_ids for layer in ranges[stage]], first, last)
    for part in parts:
        shard_on_mesh(part, env)
    group = env.mesh["pp"].get_group()
    stages = [
        PipelineStage(part, stage, n_stages, env.device, group=group)
        for part, stage in zip(parts, stage_ids, strict=True)
    ]
    loss = ScaledLoss()
    schedule_class = SCHEDULES[config.parallelism.pipeline_schedule]
    looped = config.parallelism.pipeline_schedule in LOOPED_SCHEDULES
    schedule = schedule_class(
        stages if looped else stages[0], n_microbatches=config.parallelism.microbatches, loss_fn=loss, scale_grads=False
    )
    tied_group = _tied_groups(env)
    return Pipeline(schedule, parts, rank_model, first, last, group, tied_group, config.parallelism.microbatches, loss)
