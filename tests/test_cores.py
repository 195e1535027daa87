"""The cores a process may use: affinity capped by a cgroup quota, read from cgroup files laid out as Linux does."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pretrain_core.cores import cgroup_cpu_quota, free_cores, idle_cores, usable_cores


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_a_v2_quota_along_the_path_caps_the_cores(tmp_path: Path) -> None:
    """The tightest `cpu.max` from the root down to the process's own cgroup counts, rounded up."""
    root = tmp_path / "cgroup"
    _write(root / "cpu.max", "max 100000\n")
    _write(root / "kubepods" / "cpu.max", "400000 100000\n")
    _write(root / "kubepods" / "pod1" / "cpu.max", "150000 100000\n")
    membership = tmp_path / "self-cgroup"
    _write(membership, "0::/kubepods/pod1\n")

    assert cgroup_cpu_quota(root, membership) == 1.5
    assert usable_cores(root, membership) == min(2, usable_cores(tmp_path / "none", tmp_path / "none"))


def test_a_v1_quota_counts_and_an_unlimited_one_does_not(tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    membership = tmp_path / "self-cgroup"
    _write(membership, "4:memory:/docker/abc\n2:cpu,cpuacct:/docker/abc\n")
    _write(root / "cpu,cpuacct" / "docker" / "abc" / "cpu.cfs_quota_us", "-1\n")
    _write(root / "cpu,cpuacct" / "docker" / "abc" / "cpu.cfs_period_us", "100000\n")
    assert cgroup_cpu_quota(root, membership) is None

    _write(root / "cpu,cpuacct" / "docker" / "abc" / "cpu.cfs_quota_us", "50000\n")
    assert cgroup_cpu_quota(root, membership) == 0.5
    assert usable_cores(root, membership) == 1  # half a core still runs one worker


def test_without_cgroup_files_the_affinity_mask_decides(tmp_path: Path) -> None:
    assert cgroup_cpu_quota(tmp_path, tmp_path / "missing") is None
    if not hasattr(os, "sched_getaffinity"):
        pytest.skip("no CPU affinity on this platform")
    assert usable_cores(tmp_path, tmp_path / "missing") == len(os.sched_getaffinity(0))


def test_idle_cores_counts_the_allowed_cores_under_half_busy() -> None:
    assert idle_cores([10.0, 95.0, 49.0, 0.0], {0, 1, 2}) == 2
    assert idle_cores([80.0, 60.0], {0, 1}) == 0
    assert idle_cores([0.0], {0, 5}) == 1  # a core the sample does not list is not counted


def test_free_cores_leaves_out_a_core_other_work_holds() -> None:
    """A busy loop pinned to one usable core: that core is not among the free ones."""
    cores = sorted(os.sched_getaffinity(0))
    script = f"import os; os.sched_setaffinity(0, {{{cores[0]}}})\nwhile True: pass"
    burner = subprocess.Popen([sys.executable, "-c", script])
    try:
        time.sleep(0.3)
        assert free_cores(sample_seconds=0.5) <= max(1, len(cores) - 1)
    finally:
        burner.kill()
        burner.wait()
    assert 1 <= free_cores() <= usable_cores()
