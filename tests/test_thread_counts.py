"""Outputs do not depend on how many BLAS/OpenMP threads the machine gives: the PII tagger's and the quality
classifier's numpy arithmetic, run in fresh processes with one and with two threads, write the same bytes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from pretrain_core.config import load_config
from pretrain_core.pipeline import CorpusPipeline

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
RUN = (
    "import sys\n"
    "from pretrain_core.config import load_config\n"
    "from pretrain_core.pipeline import CorpusPipeline\n"
    "pipeline = CorpusPipeline(load_config(sys.argv[1], [f'storage.root={sys.argv[2]}']))\n"
    "for stage in ('pii', 'quality'):\n"
    "    pipeline.run_stage(stage)\n"
)


def test_pii_and_quality_write_the_same_bytes_with_one_or_two_blas_threads(
    small_config_file: Path, tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    pipeline = CorpusPipeline(load_config(small_config_file, [f"storage.root={shared}"]))
    for stage in ("ingest", "clean", "dedup"):
        pipeline.run_stage(stage)
    for threads in ("1", "2"):
        root = tmp_path / f"threads-{threads}"
        (root / "corpus").mkdir(parents=True)
        for stage in ("ingest", "clean", "dedup"):
            os.symlink(shared / "corpus" / stage, root / "corpus" / stage)
        env = {**os.environ, **dict.fromkeys(THREAD_VARIABLES, threads)}
        done = subprocess.run(
            [sys.executable, "-c", RUN, str(small_config_file), str(root)], env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr[-2000:]
    for stage in ("pii", "quality"):
        one = sorted((tmp_path / "threads-1" / "corpus" / stage).rglob("*.parquet"))
        two = sorted((tmp_path / "threads-2" / "corpus" / stage).rglob("*.parquet"))
        assert len(one) > 1 and [p.name for p in one] == [p.name for p in two]
        assert all(a.read_bytes() == b.read_bytes() for a, b in zip(one, two, strict=True)), stage
