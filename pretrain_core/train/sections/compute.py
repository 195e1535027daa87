"""How each rank computes: numeric precision (and fp16's loss scale), torch.compile, activation checkpointing."""

from __future__ import annotations

from pydantic import Field

from pretrain_core.config_base import StrictModel
from pretrain_core.train.precision import Precision


class ComputeConfig(StrictModel):
    """The numerics and compilation of every forward and backward."""

    precision: Precision = Field(
        default="fp32",
        description="fp32; bf16 autocast with fp32 weights (warned when the device has no native bf16); or fp16 "
        "autocast with dynamic loss scaling (overflowed steps are skipped, counted and logged).",
    )
    loss_scale_init: float = Field(
        default=2.0**16,
        ge=1,
        le=2.0**64,
        description="fp16 only: the first loss scale; halved at each overflow, doubled after 2,000 clean steps.",
    )
    compile: bool = Field(
        default=False,
        description="torch.compile the model (tried on a probe batch first; when it fails, training goes on "
        "uncompiled and the log says why). On CPU it gained <= 5 % after a 30-90 s compile.",
    )
    compile_backend: str = Field(
        default="inductor", description="torch.compile backend (inductor, aot_eager, cudagraphs, ...)."
    )
    activation_checkpointing: bool = Field(
        default=False,
        description="Keep only each block's input in forward and recompute the rest in backward: less activation "
        "memory (docs/benchmarks.md has the figures) for about a third more compute.",
    )
