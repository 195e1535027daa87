"""The software and hardware a run trained on, recorded in every checkpoint and printed by `pretrain env`, and the
articles' pitfalls named before they cost a run: half precision the device cannot compute fast, and matrix shapes
that miss the tile sizes fast kernels need."""

from __future__ import annotations

import platform
import re
import sys
from pathlib import Path
from typing import Any

import torch

from pretrain_core.train.model.args import ModelArgs
from pretrain_core.train.observe.hardware import native_bf16
from pretrain_core.train.precision import Precision

TENSOR_CORES = (7, 0)  # Volta: the first GPUs with fp16 tensor cores
BF16_TENSOR_CORES = (8, 0)  # Ampere: the first with bf16 tensor cores
WIDTH_MULTIPLE = 64  # vocabulary and model width: whole tensor-core tiles, aligned memory
HEAD_DIM_MULTIPLE = 8


def _cpu_model() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return platform.processor() or platform.machine()
    match = re.search(r"^model name\s*:\s*(.+)$", text, re.MULTILINE)
    return match.group(1).strip() if match else platform.machine()


def _gpu_driver() -> str | None:
    try:
        import pynvml

        pynvml.nvmlInit()
        version = pynvml.nvmlSystemGetDriverVersion()
        return version.decode() if isinstance(version, bytes) else str(version)
    except Exception:  # no package, no driver: NVML raises its own error kinds
        return None


def environment() -> dict[str, Any]:
    """Versions and devices: what a result must be read against, and what to match when reproducing it."""
    cuda = torch.cuda.is_available()
    gpus = [
        {
            "name": torch.cuda.get_device_name(i),
            "compute_capability": ".".join(map(str, torch.cuda.get_device_capability(i))),
            "memory_gb": round(torch.cuda.get_device_properties(i).total_memory / 1e9, 1),
        }
        for i in range(torch.cuda.device_count() if cuda else 0)
    ]
    return {
        "python": sys.version.split()[0],
        "torch": str(torch.__version__),
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if cuda else None,
        "nccl": ".".join(map(str, torch.cuda.nccl.version()))
        if cuda and torch.distributed.is_nccl_available()
        else None,
        "gpu_driver": _gpu_driver() if cuda else None,
        "gpus": gpus,
        "cpu": _cpu_model(),
        "cpu_native_bf16": native_bf16(torch.device("cpu")),
        "platform": platform.platform(),
    }


def pitfalls(args: ModelArgs, precision: Precision, device: torch.device) -> list[str]:
    """What the articles warn of, for this model on this device: each a sentence saying what to change."""
    found = []
    if device.type == "cuda":
        capability = torch.cuda.get_device_capability(device)
        name = torch.cuda.get_device_name(device)
        if precision == "fp16" and capability < TENSOR_CORES:
            found.append(f"precision fp16 on {name} (compute {capability[0]}.{capability[1]}): no tensor cores, "
                         "so half precision saves memory but no time")  # fmt: skip
        if precision == "bf16" and capability < BF16_TENSOR_CORES:
            found.append(f"precision bf16 on {name} (compute {capability[0]}.{capability[1]}): no bf16 tensor "
                         "cores (Ampere or later has them): use fp16 with loss scaling, or fp32")  # fmt: skip
    elif precision == "fp16":
        found.append("precision fp16 on a CPU: CPUs emulate fp16 matmuls, slower than fp32")
    elif precision == "bf16" and not native_bf16(device):
        found.append(f"precision bf16 on {device} without native bf16 (no avx512_bf16/amx_bf16): expect it 25-45x "
                     "slower than fp32; set precision: fp32")  # fmt: skip
    for what, value, multiple in (
        ("vocabulary size", args.vocab_size, WIDTH_MULTIPLE),
        ("model width (d_model)", args.d_model, WIDTH_MULTIPLE),
        ("attention head size (d_model / n_head)", args.d_model // args.n_head, HEAD_DIM_MULTIPLE),
    ):
        if value % multiple:
            padded = -(-value // multiple) * multiple
            found.append(f"{what} {value} is not a multiple of {multiple}: matmuls fall off the fast tensor-core "
                         f"path (pad it to {padded})")  # fmt: skip
    return found
