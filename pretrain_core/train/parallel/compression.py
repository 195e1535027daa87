"""Gradient compression for DDP through torch's communication hooks: the gradient all-reduce in fp16 or bf16 (half
the bytes), or PowerSGD's low-rank approximation with error feedback (far fewer bytes for large matrices). For
multi-node runs whose interconnect, not compute, bounds the step; off by default.

PowerSGD keeps per-bucket error-feedback state that checkpoints do not hold: a resumed run starts it afresh, so a
resume with PowerSGD is close to, not bitwise equal to, an uninterrupted run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # the config imports the names below and must stay light: torch is imported when a hook is made
    from torch.nn.parallel import DistributedDataParallel

GradientCompression = Literal["none", "fp16", "bf16", "powersgd"]
NEEDS_NCCL = ("bf16",)  # torch's bf16 hook refuses gloo


def compress_gradients(model: DistributedDataParallel, kind: GradientCompression, rank: int, start_step: int) -> None:
    """Register the hook of ``kind`` on ``model``; PowerSGD approximates with ``rank`` and all-reduces exactly
    for the first ``start_step`` steps (its error feedback needs gradients that have settled)."""
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as power_sgd

    if kind == "fp16":
        model.register_comm_hook(None, default_hooks.fp16_compress_hook)
    elif kind == "bf16":
        model.register_comm_hook(None, default_hooks.bf16_compress_hook)
    elif kind == "powersgd":
        state = power_sgd.PowerSGDState(
            process_group=None, matrix_approximation_rank=rank, start_powerSGD_iter=max(start_step, 2)
        )
        model.register_comm_hook(state, power_sgd.powerSGD_hook)
