"""The GPU benchmark script runs end to end on CPU at toy size, so it works when a GPU is finally lent."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.shipped_text import REPO_ROOT


def test_the_gpu_benchmark_runs_on_cpu_and_reports_throughput_and_mfu() -> None:
    toy = ["--preset", "tiny", "--seq-len", "32", "--batch-size", "2", "--steps", "2", "--warmup", "1", "--no-compile"]
    done = subprocess.run(
        [sys.executable, str(REPO_ROOT / "benchmarks" / "bench_gpu_train.py"), *toy, "--precision", "fp32"],
        capture_output=True, text=True, timeout=120, env={"OMP_NUM_THREADS": "1", "PATH": ""},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert re.search(r"[\d,]+ tokens/s", done.stdout)
    assert re.search(r"MFU \d+\.\d% of the 989 TFLOP/s spec; \d+\.\d% of the", done.stdout)
