"""Learning-rate schedule: linear warmup to the peak, then cosine or linear decay to `min_lr_ratio` of it, or
constant. (The peak itself, and the linear scaling rule that moves it, is `TrainConfig.peak_lr`.)"""

from __future__ import annotations

import math
from functools import partial
from typing import Literal

import torch

Shape = Literal["cosine", "linear", "constant"]


def lr_multiplier(step: int, warmup_steps: int, max_steps: int, min_lr_ratio: float, shape: Shape = "cosine") -> float:
    """Factor applied to the peak lr at ``step`` (0-based: the lr used by the step-th optimizer update)."""
    if step < warmup_steps:
        return (step + 1) / (warmup_steps + 1)
    if shape == "constant":
        return 1.0
    decay_steps = max(1, max_steps - warmup_steps)
    progress = min(1.0, (step - warmup_steps) / decay_steps)
    remaining = 1.0 - progress if shape == "linear" else 0.5 * (1.0 + math.cos(math.pi * progress))
    return min_lr_ratio + (1.0 - min_lr_ratio) * remaining


def build_scheduler(
    optimizer: torch.optim.Optimizer, warmup_steps: int, max_steps: int, min_lr_ratio: float, shape: Shape = "cosine"
) -> torch.optim.lr_scheduler.LambdaLR:
    schedule = partial(
        lr_multiplier, warmup_steps=warmup_steps, max_steps=max_steps, min_lr_ratio=min_lr_ratio, shape=shape
    )
    return torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
