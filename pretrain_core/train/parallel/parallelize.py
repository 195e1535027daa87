"""The model as this rank runs it, whatever the layout: the parallelisms applied in one place and in one order, and
the few operations the step and validation need (forward-backward of a micro-batch, a loss sum, the gradients'
norm and clipping), so neither threads a pipeline, a sequence shard or a masking through its arguments.

`parallelize` applies them on the device mesh `init_distributed` built: the pipeline cut first (each stage then
split by tensor parallelism and sharded by FSDP2 over the data-parallel replicas: `pipeline.build_pipeline`), else
tensor parallelism, expert parallelism and DDP or FSDP2 on the whole model (`distributed.wrap_model`); context
parallelism is not a wrapper but a context (`context_parallel.sharded_sequences`) entered around each forward and
backward, so no module's `forward` takes it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import torch
from torch import nn

from pretrain_core.train.config import TrainConfig
from pretrain_core.train.model.compile import compile_in_place, compile_stage
from pretrain_core.train.model.gpt import GPT, cross_entropy
from pretrain_core.train.model.moe import balancing_loss_scale
from pretrain_core.train.model.objective import IGNORE, Masking
from pretrain_core.train.numerics import autocast
from pretrain_core.train.parallel.context_parallel import SequenceShard, sharded_sequences
from pretrain_core.train.parallel.distributed import DistEnv, clip_grad_norm, gradient_sync, reshard, wrap_model
from pretrain_core.train.parallel.expert_parallel import sync_expert_gradients
from pretrain_core.train.parallel.pipeline import Pipeline, build_pipeline
from pretrain_core.train.parallel.rng import split_heads_rng
from pretrain_core.train.precision import Precision


def _no_lap(phase: str) -> None:
    """No timing asked for."""


@dataclass
class ParallelModel:
    """``module`` is what the optimizer steps and checkpoints save: the DDP- or FSDP-wrapped model, or this rank's
    pipeline stages; ``shard`` this rank's part of every sequence under context parallelism; ``masking`` the masked
    objective's, applied to every batch."""

    module: nn.Module
    env: DistEnv
    precision: Precision
    pipeline: Pipeline | None = None
    shard: SequenceShard | None = None
    masking: Masking | None = None

    def batch(
        self, inputs: torch.Tensor, targets: torch.Tensor, generator: torch.Generator | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """What this rank computes on of a (B, T) batch: masked for the masked objective, its tokens under context
        parallelism."""
        if self.masking is not None:
            inputs, targets = self.masking.apply(inputs, generator)
        if self.shard is not None:
            inputs, targets = self.shard.take(inputs), self.shard.take(targets)
        return inputs, targets

    def forward_backward(
        self,
        inputs: torch.Tensor,
        targets: torch.Tensor,
        micro_batches: int,
        scaler: torch.amp.GradScaler | None = None,
        lap: Callable[[str], None] = _no_lap,
    ) -> float:
        """Accumulate one micro-batch's gradients (of its loss / ``micro_batches``, plus the experts' balancing
        losses, which join in backward at the same weight); return that loss (a pipeline's: its last stage's, 0
        elsewhere). Gradients are synchronised after the last micro-batch only: the caller says which through
        `synchronising`."""
        scale = (scaler.get_scale() if scaler is not None else 1.0) / micro_batches
        if self.pipeline is not None:
            # the schedule runs every stage's forward and backward in here, each microbatch's loss / microbatches
            with self._regions(), balancing_loss_scale(scale / self.pipeline.microbatches):
                loss = self.pipeline.forward_backward(inputs, targets, micro_batches)
            lap("forward")
            return loss
        with self._regions(), balancing_loss_scale(scale):
            with autocast(self.precision, self.env.device):
                scaled = cross_entropy(self.module(inputs), targets) / micro_batches
            lap("forward")
            (scaler.scale(scaled) if scaler is not None else scaled).backward()  # balancing losses join in backward
        lap("backward")
        return scaled.item()

    @contextmanager
    def _regions(self) -> Iterator[None]:
        """What the model reads from the layout while it computes: its sequence shard, its heads' dropout stream."""
        with sharded_sequences(self.shard), split_heads_rng(self.env.tp_rank if self.env.tp_size > 1 else None):
            yield

    @contextmanager
    def synchronising(self, enabled: bool) -> Iterator[None]:
        """Skip the gradient all-reduce inside (DDP's no_sync, FSDP2's equivalent) unless ``enabled``; a pipeline's
        schedule synchronises its stages itself."""
        if self.pipeline is not None:
            yield
            return
        with gradient_sync(self.module, enabled=enabled):
            yield

    def finish_gradients(self) -> None:
        """What the wrappers leave to do before an update: the tied embedding's two pipeline copies summed, each
        expert's gradient averaged over the replicas holding it."""
        if self.pipeline is not None:
            self.pipeline.sync_tied_gradients()
        sync_expert_gradients(self.module)

    def clip(self, max_norm: float) -> float:
        """The whole model's gradient norm before clipping to ``max_norm`` (0: measure only)."""
        if self.pipeline is not None:
            return self.pipeline.clip_grad_norm(max_norm)
        return clip_grad_norm(self.module, max_norm)

    def loss_sum(self, inputs: torch.Tensor, targets: torch.Tensor) -> tuple[float, int]:
        """(summed loss, tokens counted) of a batch without gradients; a pipeline counts on its last stage only."""
        with torch.no_grad(), sharded_sequences(self.shard), autocast(self.precision, self.env.device):
            if self.pipeline is not None:
                return self.pipeline.loss_sum(inputs, targets), targets.numel() if self.pipeline.last else 0
            logits = self.module(inputs)
        counted = int((targets != IGNORE).sum())  # IGNORE targets add nothing to the sum
        return float(cross_entropy(logits, targets, reduction="sum")), counted

    @contextmanager
    def evaluating(self) -> Iterator[None]:
        """Eval mode inside (no dropout); afterwards training mode, and FSDP2's gathered weights freed."""
        self.module.eval()
        if self.pipeline is not None:
            self.pipeline.set_training(False)
        try:
            yield
        finally:
            self.module.train()
            if self.pipeline is not None:
                self.pipeline.set_training(True)
                self.pipeline.reshard()
            reshard(self.module)


def parallelize(model: GPT, config: TrainConfig, env: DistEnv, masking: Masking | None = None) -> ParallelModel:
    """Collective: ``model`` (whole, on this rank's device) as the layout runs it, in this order: compiled (whole;
    under a pipeline each stage's blocks once cut), pipeline stages cut (each split by TP and sharded by FSDP2),
    else TP, EP and DDP or FSDP2 on the whole model; the sequence shard of context parallelism."""
    if config.compute.compile and env.pp_size == 1:
        compile_in_place(model, config, env)
    pipeline = build_pipeline(model, config, env) if env.pp_size > 1 else None
    if config.compute.compile and pipeline is not None:
        for part in pipeline.parts:
            compile_stage(part, config, env)
    shard = None
    if env.cp_size > 1:
        assert env.mesh is not None
        shard = SequenceShard.of(config.data.seq_len, env.cp_size, env.cp_rank, env.mesh["cp"].get_group(), env.device)
    module = pipeline.rank_model if pipeline is not None else wrap_model(model, config, env)
    return ParallelModel(module, env, config.compute.precision, pipeline, shard, masking)
