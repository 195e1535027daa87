"""One optimizer step (with gradient accumulation) and the periodic validation loss, over a `ParallelModel`: the
layout (pipeline, sequence shards, wrappers) is the model's business, not the step's."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import torch

from pretrain_core.train.model.moe import moe_layers
from pretrain_core.train.model.objective import held_out_generator
from pretrain_core.train.parallel.distributed import all_reduce_sum
from pretrain_core.train.parallel.parallelize import ParallelModel
from pretrain_core.train.shards.sequences import Sequences

PHASES = ("data", "forward", "backward", "optimizer")


class PhaseTimer:
    """Seconds per phase of a step (data, forward, backward, optimizer), summed over micro-batches. On a GPU each
    boundary synchronizes the device, or the clock would measure kernel launches, not the work."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.seconds: dict[str, float] = dict.fromkeys(PHASES, 0.0)
        self._last = time.perf_counter()

    def lap(self, phase: str) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        now = time.perf_counter()
        self.seconds[phase] += now - self._last
        self._last = now


@dataclass(frozen=True)
class StepResult:
    loss: float  # this rank's mean loss
    grad_norm: float  # global gradient norm before clipping (inf or nan when fp16 overflowed)
    skipped: bool  # no update was applied: fp16 overflow, or (fp32/bf16) a non-finite gradient


@dataclass
class Update:
    """How accumulated gradients become a step: clipped to ``grad_clip`` (0: measured only), applied by the
    ``optimizer`` at the ``scheduler``'s lr, through fp16's ``scaler`` when there is one."""

    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LRScheduler
    grad_clip: float
    scaler: torch.amp.GradScaler | None = None

    def apply(self, model: ParallelModel) -> tuple[float, bool]:
        """(gradient norm before clipping, whether the update was skipped), the lr advanced and gradients freed."""
        model.finish_gradients()
        if self.scaler is None:
            grad_norm = model.clip(self.grad_clip)
            skipped = not math.isfinite(grad_norm)  # a nan/inf gradient would poison every weight it touches
            if not skipped:
                self.optimizer.step()
        else:
            self.scaler.unscale_(self.optimizer)  # clip the true gradients, not the scaled ones
            grad_norm = model.clip(self.grad_clip)
            scale = self.scaler.get_scale()
            self.scaler.step(self.optimizer)  # skips the update when a gradient is inf/nan
            self.scaler.update()
            skipped = self.scaler.get_scale() < scale
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        for layer in moe_layers(model.module):
            layer.update_bias()  # auxiliary-loss-free balancing, when chosen
        return grad_norm, skipped


def train_step(
    model: ParallelModel,
    update: Update,
    batches: Iterator[tuple[torch.Tensor, torch.Tensor]],
    grad_accum_steps: int,
    timer: PhaseTimer | None = None,
) -> StepResult:
    """Accumulate gradients over ``grad_accum_steps`` micro-batches (synchronised only on the last), then update;
    with ``timer`` each phase is timed (a pipeline's forward and backward, interleaved, as forward)."""
    lap = timer.lap if timer is not None else lambda phase: None
    total = 0.0
    for micro in range(grad_accum_steps):
        inputs, targets = (t.to(model.env.device, non_blocking=True) for t in next(batches))
        inputs, targets = model.batch(inputs, targets)
        lap("data")
        with model.synchronising(micro == grad_accum_steps - 1):
            total += model.forward_backward(inputs, targets, grad_accum_steps, update.scaler, lap)
    grad_norm, skipped = update.apply(model)
    lap("optimizer")
    return StepResult(total, grad_norm, skipped)


def validation_loss(model: ParallelModel, sequences: np.ndarray, batch_size: int, max_batches: int) -> float | None:
    """Mean next-token loss over a fixed, evenly spaced subset of the validation sequences (so every shard and
    domain is represented), split evenly over ranks: every rank runs the same number of forward passes, which
    FSDP's collectives require. A pipeline runs whole batches only (its stages expect the training shapes).
    None when there is no validation data."""
    env = model.env
    unit = env.dp_size * (batch_size if model.pipeline else 1)
    n = min(len(sequences), batch_size * max_batches * env.dp_size) // unit * unit
    rows = np.linspace(0, len(sequences) - 1, n).round().astype(np.int64)[env.dp_rank :: env.dp_size]
    total = count = 0.0
    generator = held_out_generator(env.device)
    with model.evaluating():
        for start in range(0, len(rows), batch_size):
            batch = torch.from_numpy(sequences[rows[start : start + batch_size]].astype(np.int64)).to(env.device)
            loss, counted = model.loss_sum(*model.batch(batch[:, :-1], batch[:, 1:], generator))
            total += loss
            count += counted
    total, count = all_reduce_sum([total, count], env)
    return total / count if count else None


def losses_by_domain(
    model: ParallelModel, splits: dict[str, Sequences], batch_size: int, max_batches: int
) -> dict[str, float]:
    """Loss per split and domain on fixed samples of each (every rank alike: the passes are collective), so what a
    mixing schedule does to each domain shows in TensorBoard as `<split>_loss_by_domain/<domain>`."""
    losses = {}
    for split, sequences in splits.items():
        for domain in sorted(set(sequences.domains.tolist())):
            loss = validation_loss(model, sequences.ids[sequences.domains == domain], batch_size, max_batches)
            if loss is not None:
                losses[f"{split}_loss_by_domain/{domain}"] = loss
    return losses
