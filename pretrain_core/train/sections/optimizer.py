"""The optimizer and its learning-rate schedule: AdamW's settings, the schedule's shape, and what a non-finite step
does to them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field, model_validator

from pretrain_core.config_base import StrictModel
from pretrain_core.limits import MAX_BATCH_TOKENS, MAX_STEPS

if TYPE_CHECKING:
    import torch


class OptimizerConfig(StrictModel):
    """AdamW with a warmup and a decay; `build` makes both for a model."""

    lr: float = Field(default=3e-3, gt=0, le=1.0, description="Peak learning rate, reached at the end of warmup.")
    min_lr_ratio: float = Field(default=0.1, ge=0, le=1, description="Final learning rate as a fraction of `lr`.")
    warmup_steps: int = Field(default=20, ge=0, le=MAX_STEPS, description="Steps of linear warmup from 0 to `lr`.")
    lr_schedule: Literal["cosine", "linear", "constant"] = Field(
        default="cosine", description="After warmup: cosine or linear decay to min_lr_ratio x lr, or a constant lr."
    )
    lr_reference_batch_tokens: int | None = Field(
        default=None,
        ge=1,
        le=MAX_BATCH_TOKENS,
        description="Linear scaling rule: `lr` was tuned at this many tokens per optimizer step, and the peak "
        "becomes lr x (global batch tokens / this), so changing GPUs or micro-batches keeps the tuned lr. "
        "Unset: `lr` as given.",
    )
    weight_decay: float = Field(default=0.01, ge=0, le=1, description="AdamW decoupled weight decay (matrices only).")
    betas: tuple[float, float] = Field(default=(0.9, 0.999), description="AdamW (beta1, beta2).")
    eps: float = Field(default=1e-8, gt=0, le=1e-3, description="AdamW epsilon.")
    grad_clip: float = Field(default=1.0, ge=0, le=1e6, description="Max global gradient L2 norm; 0 disables clipping.")
    max_nonfinite_steps: int = Field(
        default=3,
        ge=1,
        le=MAX_STEPS,
        description="A step with a nan/inf gradient is skipped (counted, logged); after this many in a row the run "
        "rolls back to its last checkpoint and lowers the lr by rollback_lr_factor.",
    )
    rollback_lr_factor: float = Field(
        default=0.5, gt=0, le=1, description="Multiplies the lr schedule at each rollback after non-finite steps."
    )

    @model_validator(mode="after")
    def _check_betas(self) -> OptimizerConfig:
        if not 0 <= self.betas[0] < 1 or not 0 <= self.betas[1] < 1:
            raise ValueError(f"betas {self.betas} must lie in [0, 1)")
        return self

    def peak_lr(self, tokens_per_step: int) -> float:
        """The lr warmup reaches: `lr`, or by the linear scaling rule (Goyal et al. 2017) `lr` x tokens per step /
        `lr_reference_batch_tokens`: a k times larger global batch gets k times the peak it was tuned at."""
        if self.lr_reference_batch_tokens is None:
            return self.lr
        return self.lr * tokens_per_step / self.lr_reference_batch_tokens

    def build(
        self, model: torch.nn.Module, peak_lr: float, max_steps: int, width_mult: float = 1.0
    ) -> tuple[torch.optim.AdamW, torch.optim.lr_scheduler.LambdaLR]:
        """AdamW at ``peak_lr`` (the hidden matrices at peak_lr / ``width_mult`` under µP) and its schedule."""
        from pretrain_core.train.optim import build_adamw
        from pretrain_core.train.schedule import build_scheduler

        optimizer = build_adamw(model, self, peak_lr, width_mult)
        scheduler = build_scheduler(optimizer, self.warmup_steps, max_steps, self.min_lr_ratio, self.lr_schedule)
        return optimizer, scheduler
