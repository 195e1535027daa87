from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

# Run in a fresh interpreter: the heap of a long-lived test process has a history of its own.
PROBE = textwrap.dedent(
    """
    import json, resource, torch
    from pretrain_core.train.allocator import keep_freed_memory

    def faults_per_round():
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        for _ in range(5):
            torch.empty(64 << 20, dtype=torch.uint8).fill_(1)  # 64 MiB, above glibc's default mmap threshold
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

    default = [faults_per_round() for _ in range(2)]
    applied = keep_freed_memory()
    kept = [faults_per_round() for _ in range(3)]
    print(json.dumps({"default": default, "applied": applied, "kept": kept}))
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc malloc settings")
def test_large_buffers_are_reused_instead_of_page_faulted_on_every_step() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=120)
    probe = json.loads(out.stdout)
    pages_per_round = 5 * (64 << 20) // 4096
    assert probe["applied"]
    assert min(probe["default"]) > pages_per_round // 2  # glibc default: fresh zeroed pages every time
    assert probe["kept"][-1] < pages_per_round // 10  # once the heap has grown, buffers are reused
