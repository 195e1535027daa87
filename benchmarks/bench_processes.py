"""Shard work in worker processes (`execution.processes`) against the same shards run one after another.

The per-shard work of the data stages is Python that holds the GIL, so threads share one core; processes use every
core without a Dask cluster. This runs the clean, dedup (its fit's per-shard sketching too) and PII stages over the
demo corpus (ingest runs once, in order, and is shared), in order and then in N spawned processes, and
prints wall seconds, CPU seconds of this process and its workers, input MB/s of wall time, the cores in use
(CPU / wall) and the speed-up against the in-order run. Outputs of both runs are compared byte for byte.

    python benchmarks/bench_processes.py              # N = the machine's cores
    python benchmarks/bench_processes.py --processes 4
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import resource
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

from pretrain_core.config import load_config
from pretrain_core.pipeline import CorpusPipeline

STAGES = ("clean", "pii")


def cpu_seconds() -> float:
    """CPU seconds of this process and of its finished children (the worker processes)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def text_megabytes(root: Path) -> float:
    files = sorted((root / "data").glob("*.parquet"))
    return (
        sum(sum(len(t.encode()) for t in pq.read_table(f, columns=["text"]).column("text").to_pylist()) for f in files)
        / 1e6
    )


def run(root: Path, processes: int, stage: str) -> tuple[float, float]:
    """Wall and CPU seconds of one stage over the shared ingest output, writing under `root`."""
    cfg = load_config(None, [f"storage.root={root}", f"execution.processes={processes}"])
    wall, cpu = time.perf_counter(), cpu_seconds()
    CorpusPipeline(cfg).run_stage(stage)
    return time.perf_counter() - wall, cpu_seconds() - cpu


def share(stage: str, in_order: Path, spread: Path) -> None:
    """Run a stage once, in order, and let the other run read its outputs."""
    CorpusPipeline(load_config(None, [f"storage.root={in_order}"])).run_stage(stage)
    (spread / "corpus").mkdir(parents=True, exist_ok=True)
    os.symlink(in_order / "corpus" / stage, spread / "corpus" / stage)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1, help="worker processes (default: cores)")
    args = parser.parse_args()
    header = ("stage", "run", "MB", "wall s", "CPU s", "MB/s wall", "cores", "speed-up")
    with tempfile.TemporaryDirectory() as tmp:
        in_order, spread = Path(tmp) / "in_order", Path(tmp) / "spread"
        share("ingest", in_order, spread)
        shards = len(list((in_order / "corpus" / "ingest" / "data").glob("*.parquet")))
        print(f"demo corpus: {shards} ingest shards; {args.processes} processes on {os.cpu_count()} cores")
        print("  {:<6} {:<14} {:>6} {:>7} {:>7} {:>9} {:>6} {:>9}".format(*header))
        for stage, before in (("clean", "ingest"), ("dedup", "clean"), ("pii", "dedup")):
            size = text_megabytes(in_order / "corpus" / before)
            base_wall, base_cpu = run(in_order, 0, stage)
            wall, cpu = run(spread, args.processes, stage)
            for name, (w, c) in (("in order", (base_wall, base_cpu)), (f"{args.processes} processes", (wall, cpu))):
                row = (stage, name, f"{size:.2f}", f"{w:.1f}", f"{c:.1f}", f"{size / w:.3f}", f"{c / w:.2f}")
                print("  {:<6} {:<14} {:>6} {:>7} {:>7} {:>9} {:>6}".format(*row), f"{base_wall / w:>8.2f}x")
            mine = sorted((spread / "corpus" / stage).rglob("*.parquet"))
            theirs = sorted((in_order / "corpus" / stage).rglob("*.parquet"))
            same = len(mine) == len(theirs) and all(
                a.read_bytes() == b.read_bytes() for a, b in zip(mine, theirs, strict=True)
            )
            print(f"  {stage:<6} outputs byte-identical: {same}")


if __name__ == "__main__":
    main()
