"""The GPU benchmark script runs end to end on CPU at toy size, so it works when a GPU is finally lent."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.shipped_text import REPO_ROOT


def test_the_gpu_benchmark_runs_on_cpu_and_reports_throughput_and_mfu() -> None:
    toy = ["--preset", "tiny", "--seq-len", "32", "--batch-size", "2", "--steps", "2", "--warmup", "1", "--no-compile"]
    done = subprocess.run(
        [sys.executable, str(REPO_ROOT / "benchmarks" / "bench_gpu_train.py"), *toy, "--precision", "fp32"],
        capture_output=True, text=True, timeout=120, env={"OMP_NUM_THREADS": "1", "PATH": ""},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert re.search(r"[\d,]+ tokens/s", done.stdout)
    for count in ("llm.c", "PaLM"):  # both counts, so the figure compares with llm.c and nanoGPT as with PaLM
        assert re.search(
            rf"MFU \({re.escape(count)} count\) \d+\.\d% of the 989 TFLOP/s spec; \d+\.\d% of the", done.stdout
        )


def test_the_gpu_check_runs_every_part_on_cpu_and_appends_its_figures(tmp_path: Path) -> None:
    """benchmarks/gpu_check.py at toy size: MFU both ways, fp16 with the scaler, the checkpoint timing, NVML,
    generation, and a Markdown block naming the device."""
    record = tmp_path / "gpu-checks.md"
    done = subprocess.run(
        [sys.executable, str(REPO_ROOT / "benchmarks" / "gpu_check.py"), "--toy", "--append-to", str(record)],
        capture_output=True, text=True, timeout=300, env={"OMP_NUM_THREADS": "1", "PATH": ""},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    for figure in (r"MFU \(llm\.c count\)", r"loss scale \d+", r"background [\d.]+ s blocked", r"NVML: ",
                   r"generation: [\d,]+ tokens/s"):  # fmt: skip
        assert re.search(figure, done.stdout), figure
    assert re.search(r"^## \d{4}-\d\d-\d\d \d\d:\d\d UTC: CPU$", record.read_text(), re.MULTILINE)
