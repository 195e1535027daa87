"""One optimizer step (with gradient accumulation) and the periodic validation loss."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from pretrain_core.train.context_parallel import SequenceShard
from pretrain_core.train.distributed import DistEnv, all_reduce_sum, clip_grad_norm, gradient_sync
from pretrain_core.train.expert_parallel import sync_expert_gradients
from pretrain_core.train.model import cross_entropy
from pretrain_core.train.moe import moe_aux_loss, moe_layers
from pretrain_core.train.objective import IGNORE, Masking, held_out_generator
from pretrain_core.train.pipeline import Pipeline
from pretrain_core.train.precision import Precision

PHASES = ("data", "forward", "backward", "optimizer")
TORCH_DTYPES: dict[Precision, torch.dtype] = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


def autocast(precision: Precision, device: torch.device) -> AbstractContextManager[None]:
    """bf16 or fp16 autocast (weights and optimizer stay fp32), or a no-op for fp32."""
    enabled = precision != "fp32"
    dtype = TORCH_DTYPES[precision] if enabled else torch.bfloat16
    return torch.autocast(device_type=device.type, dtype=dtype, enabled=enabled)


def grad_scaler(precision: Precision, device: torch.device, init_scale: float = 2.0**16) -> torch.amp.GradScaler | None:
    """Dynamic loss scaling for fp16 (its 5 exponent bits underflow small gradients): the loss is multiplied
    before backward, gradients divided before the update, and a step whose gradients overflowed is skipped with
    the scale halved. None for fp32 and bf16, which have fp32's exponent range."""
    return torch.amp.GradScaler(device.type, init_scale=init_scale) if precision == "fp16" else None


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


def train_step(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
    batches: Iterator[tuple[torch.Tensor, torch.Tensor]],
    grad_accum_steps: int,
    grad_clip: float,
    precision: Precision,
    device: torch.device,
    scaler: torch.amp.GradScaler | None = None,
    masking: Masking | None = None,
    timer: PhaseTimer | None = None,
    pipeline: Pipeline | None = None,
    shard: SequenceShard | None = None,
) -> StepResult:
    """Accumulate gradients over micro-batches (all-reducing only on the last), clip, update. With ``masking``
    (the masked objective) each micro-batch's inputs are masked and the loss counts the hidden tokens only; with
    ``timer`` each phase is timed. With a ``pipeline`` its schedule runs each micro-batch (forward and backward
    interleaved, timed as forward) and the loss is the last stage's (0 on the other ranks). With a context-parallel
    ``shard`` the model sees this rank's tokens of each sequence, and the loss is their mean."""
    lap = timer.lap if timer is not None else lambda phase: None
    total = 0.0
    for micro in range(grad_accum_steps):
        inputs, targets = (t.to(device, non_blocking=True) for t in next(batches))
        if masking is not None:
            inputs, targets = masking.apply(inputs)
        if shard is not None:
            inputs, targets = shard.take(inputs), shard.take(targets)
        lap("data")
        if pipeline is not None:
            total += pipeline.forward_backward(inputs, targets, grad_accum_steps)
            lap("forward")
            continue
        with gradient_sync(model, enabled=micro == grad_accum_steps - 1):
            with autocast(precision, device):
                loss = cross_entropy(model(inputs, shard=shard), targets) / grad_accum_steps
            balance = moe_aux_loss(model)  # experts' balancing losses: trained on, not reported as the loss
            objective = loss + balance / grad_accum_steps if balance is not None else loss
            lap("forward")
            (scaler.scale(objective) if scaler is not None else objective).backward()
        total += loss.item()
        lap("backward")
    if pipeline is not None:
        pipeline.sync_tied_gradients()
    sync_expert_gradients(model)
    if scaler is None:
        grad_norm = pipeline.clip_grad_norm(grad_clip) if pipeline else clip_grad_norm(model, grad_clip)
        skipped = not math.isfinite(grad_norm)  # a nan/inf gradient would poison every weight it touches
        if not skipped:
            optimizer.step()
    else:
        scaler.unscale_(optimizer)  # clip the true gradients, not the scaled ones
        grad_norm = clip_grad_norm(model, grad_clip)
        scale = scaler.get_scale()
        scaler.step(optimizer)  # skips the update when a gradient is inf/nan
        scaler.update()
        skipped = scaler.get_scale() < scale
    scheduler.step()
    optimizer.zero_grad(set_to_none=True)
    for layer in moe_layers(model):
        layer.update_bias()  # auxiliary-loss-free balancing, when chosen
    lap("optimizer")
    return StepResult(total, grad_norm, skipped)


@torch.no_grad()
def validation_loss(
    model: nn.Module,
    sequences: np.ndarray,
    batch_size: int,
    max_batches: int,
    precision: Precision,
    env: DistEnv,
    masking: Masking | None = None,
    pipeline: Pipeline | None = None,
    shard: SequenceShard | None = None,
) -> float | None:
    """Mean next-token loss over a fixed, evenly spaced subset of the validation sequences (so every shard and
    domain is represented), split evenly over ranks: every rank runs the same number of forward passes, which
    FSDP's collectives require. A ``pipeline`` runs whole batches only (its stages expect the training shapes)
    and counts the loss on its last stage. None when there is no validation data."""
    unit = env.dp_size * (batch_size if pipeline else 1)
    n = min(len(sequences), batch_size * max_batches * env.dp_size) // unit * unit
    rows = np.linspace(0, len(sequences) - 1, n).round().astype(np.int64)[env.dp_rank :: env.dp_size]
    total = count = 0.0
    generator = held_out_generator(env.device)
    model.eval()
    if pipeline is not None:
        pipeline.set_training(False)
    for start in range(0, len(rows), batch_size):
        batch = torch.from_numpy(sequences[rows[start : start + batch_size]].astype(np.int64)).to(env.device)
        inputs, targets = batch[:, :-1], batch[:, 1:]
        if masking is not None:
            inputs, targets = masking.apply(inputs, generator)
        if shard is not None:
            inputs, targets = shard.take(inputs), shard.take(targets)
        with autocast(precision, env.device):
            if pipeline is not None:
                total += pipeline.loss_sum(inputs, targets)
                count += targets.numel() if pipeline.last else 0
                continue
            logits = model(inputs, shard=shard)
        total += float(cross_entropy(logits, targets, reduction="sum"))  # IGNORE targets add nothing
        count += int((targets != IGNORE).sum())
    model.train()
    if pipeline is not None:
        pipeline.set_training(True)
    total, count = all_reduce_sum([total, count], env)
    return total / count if count else None
