"""How many cores this process may use: its CPU affinity, capped by a cgroup CPU quota (a container's `--cpus`,
a Kubernetes limit), which `os.cpu_count()` and the affinity mask both ignore. Shard work sizes its worker
processes by it (`execution.processes: auto`)."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")


def usable_cores(cgroup_root: Path = CGROUP_ROOT, proc_cgroup: Path = Path("/proc/self/cgroup")) -> int:
    """The cores the scheduler lets this process run on, at most its cgroup's quota (rounded up), at least 1."""
    cores = _affinity_cores()
    quota = cgroup_cpu_quota(cgroup_root, proc_cgroup)
    if quota is not None:
        cores = min(cores, max(1, math.ceil(quota)))
    return max(1, cores)


BUSY_SHARE = 0.5  # a core busier than this over the sample is taken


def free_cores(sample_seconds: float = 0.1) -> int:
    """Of the usable cores, how many other work leaves free now: those this process may run on that were busy
    less than half of a short sample. What a latency-bound loop (token-by-token generation) should size its
    threads by: torch's threads spin on a core another process holds and slow every step several-fold (measured
    in docs/serving.md: 560 tokens/s on one thread against 96 on two with the other core taken)."""
    import psutil

    busy = psutil.cpu_percent(interval=sample_seconds, percpu=True)
    allowed = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set(range(len(busy)))
    return max(1, min(idle_cores(busy, allowed), usable_cores()))


def idle_cores(busy_percent: list[float], allowed: set[int]) -> int:
    """How many of the ``allowed`` cores were busy less than `BUSY_SHARE` (percentages by core number)."""
    return sum(1 for cpu in allowed if cpu < len(busy_percent) and busy_percent[cpu] < 100 * BUSY_SHARE)


def _affinity_cores() -> int:
    process_cpu_count = getattr(os, "process_cpu_count", None)  # Python 3.13+: affinity-aware
    if process_cpu_count is not None:
        return int(process_cpu_count() or 1)
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def cgroup_cpu_quota(cgroup_root: Path = CGROUP_ROOT, proc_cgroup: Path = Path("/proc/self/cgroup")) -> float | None:
    """CPUs' worth of time this process's cgroup may use per period (cgroup v2 `cpu.max`, v1 `cpu.cfs_quota_us`
    over `cpu.cfs_period_us`), the tightest along its path; None when unlimited or not on Linux."""
    try:
        memberships = proc_cgroup.read_text().splitlines()
    except OSError:
        return None
    quotas: list[float] = []
    for line in memberships:
        _, controllers, path = line.split(":", 2)
        relative = path.lstrip("/")
        if controllers == "":  # v2: one unified hierarchy
            quotas += _along(cgroup_root, relative, _v2_quota)
        elif "cpu" in controllers.split(","):
            for mount in (cgroup_root / "cpu", cgroup_root / "cpu,cpuacct", cgroup_root / "cpuacct,cpu"):
                quotas += _along(mount, relative, _v1_quota)
    return min(quotas) if quotas else None


def _along(mount: Path, relative: str, read: Callable[[Path], float | None]) -> list[float]:
    """The quotas set at the mount's root and at each cgroup down to the process's own."""
    found = []
    parts = [part for part in relative.split("/") if part]
    for depth in range(len(parts) + 1):
        quota = read(mount.joinpath(*parts[:depth]))
        if quota is not None:
            found.append(quota)
    return found


def _v2_quota(folder: Path) -> float | None:
    try:
        quota, period = (folder / "cpu.max").read_text().split()
    except (OSError, ValueError):
        return None
    return None if quota == "max" else int(quota) / int(period)


def _v1_quota(folder: Path) -> float | None:
    try:
        quota = int((folder / "cpu.cfs_quota_us").read_text())
        period = int((folder / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return None if quota <= 0 or period <= 0 else quota / period
