"""What the device can do natively, so a setting that would crawl is named before it does."""

from __future__ import annotations

import sys
from pathlib import Path

import torch

_BF16_CPU_FLAGS = ("avx512_bf16", "amx_bf16")


def cpu_flags_have_bf16(cpuinfo: str) -> bool:
    """Whether /proc/cpuinfo's `flags` list an instruction set that computes in bf16 (else bf16 is emulated)."""
    flags = {
        flag for line in cpuinfo.splitlines() if line.startswith("flags") for flag in line.split(":", 1)[1].split()
    }
    return any(flag in flags for flag in _BF16_CPU_FLAGS)


def native_bf16(device: torch.device) -> bool:
    """bf16 runs natively on this device: a GPU that supports it, a CPU with AVX512-BF16 or AMX. Where the CPU
    cannot be asked (not Linux), assume yes rather than warn wrongly."""
    if device.type == "cuda":
        return bool(torch.cuda.is_bf16_supported())
    if device.type != "cpu" or not sys.platform.startswith("linux"):
        return True
    try:
        return cpu_flags_have_bf16(Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return True
