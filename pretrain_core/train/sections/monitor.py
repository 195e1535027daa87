"""What a run measures and warns about while it trains: validation, logs, MFU, spikes, stragglers, gradient checks."""

from __future__ import annotations

from pydantic import Field

from pretrain_core.config_base import StrictModel
from pretrain_core.limits import MAX_BATCHES, MAX_FLOPS, MAX_STEPS


class MonitorConfig(StrictModel):
    """Validation, logging and the alarms."""

    eval_every: int = Field(
        le=MAX_STEPS, default=50, ge=1, description="Measure validation loss every this many steps (and at 0, end)."
    )
    eval_batches: int = Field(
        le=MAX_BATCHES, default=8, ge=1, description="Validation micro-batches per rank for each periodic eval."
    )
    log_every: int = Field(
        default=100,
        ge=1,
        le=MAX_STEPS,
        description="Log training metrics (lr, grad norm, tokens/s, MFU, memory) every this many steps; the loss "
        "goes to TensorBoard every step.",
    )
    peak_flops_per_device: float | None = Field(
        default=None,
        gt=0,
        le=MAX_FLOPS,
        description="The device's peak FLOP/s in the training precision (spec sheet), the denominator of MFU. "
        "Unset: measured at the first log with large matmuls.",
    )
    loss_spike_sigma: float = Field(
        default=6.0,
        gt=0,
        le=1000,
        description="Log a loss spike (and, on a stack, a `pretrain.training.loss-spike` event) when a step's loss is "
        "this many standard deviations above the mean of the last loss_spike_window steps.",
    )
    loss_spike_window: int = Field(default=128, ge=2, le=MAX_STEPS, description="Steps a loss spike is judged on.")
    straggler_check_every: int = Field(
        default=50,
        ge=0,
        le=MAX_STEPS,
        description="Every this many steps the ranks share their compute time per step; 0: never. A rank slower "
        "than straggler_factor x the others' median is logged (and a `pretrain.training.straggler` event).",
    )
    straggler_factor: float = Field(
        default=1.5, gt=1, le=1000, description="How much slower than the others' median a straggling rank is."
    )
    overfit_alarm_ratio: float = Field(
        default=1.3,
        gt=1,
        le=1000,
        description="Warn when validation perplexity exceeds the recent training perplexity by this factor: the "
        "model is memorising its training text.",
    )
    grad_check_every: int = Field(
        default=1000,
        ge=0,
        le=MAX_STEPS,
        description="Every this many steps, check autograd against finite differences on a float64 copy of the "
        "model (the articles: every 1,000 steps); logged, and warned about beyond grad_check_tolerance. 0: never.",
    )
    grad_check_tolerance: float = Field(
        default=1e-2, gt=0, le=1, description="Largest relative error between the two gradients that passes the check."
    )
