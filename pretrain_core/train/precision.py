"""The floating-point formats a run trains, evaluates or exports in: the one list of them (torch-free, so config
models can name it; `step.TORCH_DTYPES` maps each to its torch dtype)."""

from __future__ import annotations

from typing import Literal, get_args

Precision = Literal["fp32", "bf16", "fp16"]
PRECISIONS: tuple[Precision, ...] = get_args(Precision)
