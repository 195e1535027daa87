"""What the device can do: native bf16 (so a setting that would crawl is named before it does), its measured matmul
peak (what MFU is reported against), FLOPs per token, memory in use, and a GPU's utilisation, power and
temperature (NVML)."""

from __future__ import annotations

import functools
import logging
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import torch

log = logging.getLogger(__name__)
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


def measure_peak_flops(device: torch.device, dtype: torch.dtype = torch.float32, seconds: float = 0.3) -> float:
    """FLOP/s of large square matmuls on this device in ``dtype``, timed for about ``seconds``: the ceiling MFU
    is reported against when the device's spec sheet figure is not given."""
    n = 4096 if device.type == "cuda" else 1024
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    torch.mm(a, b)  # warm-up: kernels chosen, caches filled
    _synchronize(device)
    runs, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds or runs < 2:
        torch.mm(a, b)
        runs += 1
        if runs % 4 == 0:
            _synchronize(device)
    _synchronize(device)
    elapsed = time.perf_counter() - started
    return 2 * n**3 * runs / elapsed


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def memory_metrics(device: torch.device) -> dict[str, float]:
    """Resident memory of this process, and on a GPU what torch's allocator holds, in MB."""
    values = {"memory/cpu_rss_mb": psutil.Process().memory_info().rss / 2**20}
    if device.type == "cuda":
        stats = torch.cuda.memory_stats(device)
        values["memory/cuda_allocated_mb"] = torch.cuda.max_memory_allocated(device) / 2**20
        values["memory/cuda_reserved_mb"] = torch.cuda.max_memory_reserved(device) / 2**20
        values["memory/cuda_alloc_retries"] = float(stats.get("num_alloc_retries", 0))  # cache flushed to fit
        values["memory/cuda_ooms"] = float(stats.get("num_ooms", 0))
    return values


@functools.cache
def _nvml_handle(index: int) -> Any | None:
    """NVML's handle of GPU ``index`` (nvidia-ml-py), or None where there is no NVML (no driver, no package)."""
    try:
        import pynvml

        pynvml.nvmlInit()
        return pynvml.nvmlDeviceGetHandleByIndex(index)
    except Exception as error:  # ImportError, or NVMLError of any kind: no GPU figures, and say so once
        log.info("no GPU utilisation, power or temperature figures: NVML unavailable (%s)", error)
        return None


def device_metrics(device: torch.device) -> dict[str, float]:
    """A GPU's utilisation (%), power (W), temperature (C) and memory in use (MB) as NVML reports them; nothing on
    a CPU or where NVML is missing."""
    if device.type != "cuda" or (handle := _nvml_handle(device.index or 0)) is None:
        return {}
    import pynvml

    try:
        return {
            "gpu/utilization_percent": float(pynvml.nvmlDeviceGetUtilizationRates(handle).gpu),
            "gpu/power_watts": pynvml.nvmlDeviceGetPowerUsage(handle) / 1000,
            "gpu/temperature_c": float(pynvml.nvmlDeviceGetTemperature(handle, pynvml.NVML_TEMPERATURE_GPU)),
            "gpu/memory_used_mb": pynvml.nvmlDeviceGetMemoryInfo(handle).used / 2**20,
        }
    except pynvml.NVMLError:
        return {}
