"""Numeric precision at run time: the torch dtypes of each precision, autocast, and fp16's loss scaler."""

from __future__ import annotations

from contextlib import AbstractContextManager

import torch

from pretrain_core.train.precision import Precision

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
