"""How the corpus DAG's cost and memory grow with the corpus: every stage at 1x, 4x and 16x of the demo corpus.

For each scale, `scale_corpus.py` builds the corpus (replicas of the demo corpus with near-duplicates and new
documents); then each stage, ingest to tokenize, runs in a fresh child process (`pretrain_core`'s
`CorpusPipeline.run_stage`) whose shard jobs, fit maps and reduce jobs run in `execution.processes` (2) spawned
worker processes, as `pretrain corpus` runs them on one machine. The child's CPU seconds (its workers' included)
come from `os.wait4`; its own peak RSS (the driver: planning, fits that are not map-reduce, manifests) and its
workers' largest peak RSS it reports itself (`getrusage`; the workers' from /proc, see `WorkerPeaks`). Per stage and
scale the table gives the MB of text the stage read, the text MB of its largest input shard, CPU seconds, MB/s per
core and both peaks; the last table gives, per stage, the cost per MB, the driver's peak and the workers' peak at
the largest scale as multiples of the smallest (flat: 1.0). Bars (issue 12): cost per MB within 1.3x, driver peak
RSS within 1.5x; a worker's peak should follow the largest shard it handles, not the corpus.

    python benchmarks/bench_scale.py                      # scales 1 4 16 (about 25 minutes on 2 cores)
    python benchmarks/bench_scale.py --scales 1 2 --keep  # keep the corpora and outputs under --workdir
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import contextlib
import json
import math
import multiprocessing
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq
from scale_corpus import build

from pretrain_core.config import load_config
from pretrain_core.pipeline import CORPUS_STAGES, CorpusPipeline

WORKERS = 2  # shard worker processes per stage (execution.processes), unless --set gives another count


@dataclass(frozen=True)
class StageRun:
    scale: int
    stage: str
    megabytes: float  # UTF-8 text the stage read
    largest_shard_mb: float  # UTF-8 text of its largest input shard
    cpu_seconds: float
    driver_rss_mb: float
    worker_rss_mb: float

    @property
    def mb_per_core_second(self) -> float:
        return self.megabytes / self.cpu_seconds if self.cpu_seconds else 0.0


def overrides(sources_file: Path, root: Path, settings: Sequence[str] = ()) -> list[str]:
    return [f"sources_file={sources_file}", f"storage.root={root}", "name=scale", *settings]


def input_megabytes(sources_file: Path, root: Path, stage: str) -> tuple[float, float]:
    """Text megabytes of the stage's input shards, all and the largest (ingest: of its output, which is its
    sources' text)."""
    pipeline = CorpusPipeline(load_config(None, overrides(sources_file, root)))
    previous = pipeline.registry.previous(stage)
    shards = sorted(Path(pipeline.root(previous or stage), "data").glob("*.parquet"))
    sizes = [
        pc.sum(pc.binary_length(pq.read_table(shard, columns=["text"]).column("text"))).as_py() or 0 for shard in shards
    ]
    return sum(sizes) / 1e6, max(sizes, default=0) / 1e6


def run_stage_child(sources_file: Path, root: Path, stage: str, settings: Sequence[str]) -> tuple[float, float, float]:
    """CPU seconds (workers included), the driver's and the largest worker's peak RSS (MB) of a child process that
    runs one stage."""
    with tempfile.NamedTemporaryFile(suffix=".json") as report_file:
        command = [sys.executable, __file__, "--child", stage, "--sources", str(sources_file), "--root", str(root)]
        command += [f"--set={setting}" for setting in settings] + ["--report", report_file.name]
        process = subprocess.Popen(command)
        _, status, usage = os.wait4(process.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError(f"stage {stage} failed at {root}")
        peaks = json.loads(Path(report_file.name).read_text())
    return usage.ru_utime + usage.ru_stime, peaks["driver_rss_mb"], peaks["worker_rss_mb"]


def run_child(stage: str, sources_file: Path, root: Path, settings: Sequence[str], report_file: Path) -> None:
    """The child's work: run the stage, then write its own and its workers' peak RSS."""
    workers = WorkerPeaks()
    workers.start()
    CorpusPipeline(load_config(None, overrides(sources_file, root, settings))).run_stage(stage)
    workers.stop()
    driver = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    report_file.write_text(json.dumps({"driver_rss_mb": driver, "worker_rss_mb": workers.peak_mb}))


class WorkerPeaks(threading.Thread):
    """The largest peak RSS of this process's worker processes, sampled from /proc (VmHWM, the high-water mark of
    the worker's own program: `getrusage`'s children figure would count the driver's pages each worker held between
    fork and exec). Sampled every 50 ms, so growth in a worker's last 50 ms may be missed."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak_mb = 0.0
        self._done = threading.Event()

    def run(self) -> None:
        if not Path("/proc/self/status").exists():
            self.peak_mb = math.nan  # not Linux: no figure rather than a zero
            return
        while not self._done.wait(0.05):
            for child in multiprocessing.active_children():
                with contextlib.suppress(OSError, ValueError, IndexError):  # gone, or exiting (no memory left)
                    status = Path(f"/proc/{child.pid}/status").read_text()
                    kilobytes = int(status.split("VmHWM:")[1].split()[0])
                    self.peak_mb = max(self.peak_mb, kilobytes / 1024)

    def stop(self) -> None:
        self._done.set()
        self.join()


def measure(scale: int, workdir: Path, settings: Sequence[str]) -> list[StageRun]:
    corpus, root = workdir / f"corpus-{scale}x", workdir / f"out-{scale}x"
    sources_file = build(corpus, scale)
    if not any(setting.startswith("execution.processes=") for setting in settings):
        settings = [f"execution.processes={WORKERS}", *settings]
    runs = []
    for stage in CORPUS_STAGES:
        cpu, driver, workers = run_stage_child(sources_file, root, stage, settings)
        megabytes, largest = input_megabytes(sources_file, root, stage)
        runs.append(StageRun(scale, stage, megabytes, largest, cpu, driver, workers))
        print(
            f"  {scale:>3}x {stage:<13} {megabytes:8.1f} MB {cpu:8.1f} CPU s  RSS driver {driver:6.0f} MB"
            f"  workers {workers:6.0f} MB (largest shard {largest:.1f} MB)",
            flush=True,
        )
    return runs


def report(runs: list[StageRun]) -> None:
    scales = sorted({r.scale for r in runs})
    print(
        f"\n  {'stage':<13} {'scale':>5} {'MB in':>8} {'shard MB':>8} {'CPU s':>8} {'MB/s/core':>9}"
        f" {'driver RSS':>10} {'worker RSS':>10}"
    )
    for stage in CORPUS_STAGES:
        for run in (r for r in runs if r.stage == stage):
            print(
                f"  {stage:<13} {run.scale:>4}x {run.megabytes:>8.1f} {run.largest_shard_mb:>8.1f}"
                f" {run.cpu_seconds:>8.1f} {run.mb_per_core_second:>9.3f} {run.driver_rss_mb:>10.0f}"
                f" {run.worker_rss_mb:>10.0f}"
            )
    first, last = scales[0], scales[-1]
    total = {s: sum(r.cpu_seconds for r in runs if r.scale == s) for s in scales}
    ingest = {s: next(r.megabytes for r in runs if r.scale == s and r.stage == "ingest") for s in scales}
    print(f"\n  {last}x against {first}x (1.0 = flat; bars: cost per MB 1.3, driver peak 1.5)")
    for stage in CORPUS_STAGES:
        small = next(r for r in runs if r.scale == first and r.stage == stage)
        large = next(r for r in runs if r.scale == last and r.stage == stage)
        per_mb = (large.cpu_seconds / large.megabytes) / (small.cpu_seconds / small.megabytes)
        print(
            f"  {stage:<13} cost/MB {per_mb:5.2f}x   driver peak {large.driver_rss_mb / small.driver_rss_mb:5.2f}x"
            f"   worker peak {large.worker_rss_mb / max(small.worker_rss_mb, 1):5.2f}x"
            f" (largest shard {large.largest_shard_mb / max(small.largest_shard_mb, 1e-9):5.2f}x)"
        )
    for scale in scales:
        rate = ingest[scale] / total[scale] * 3600 / 1000
        print(
            f"  {scale:>4}x whole DAG: {total[scale]:.0f} CPU s for {ingest[scale]:.0f} MB: {rate:.2f} GB per core-hour"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scales", type=int, nargs="+", default=[1, 4, 16], help="replicas of the demo corpus")
    parser.add_argument("--workdir", type=Path, help="where corpora and outputs go (default: a temporary directory)")
    parser.add_argument("--keep", action="store_true", help="keep --workdir's corpora and outputs")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a config override for every stage (repeatable), e.g. dedup.partitions=32 for a corpus past 1 GB",
    )
    parser.add_argument("--child", metavar="STAGE", help=argparse.SUPPRESS)
    parser.add_argument("--sources", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--root", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--report", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run_child(args.child, args.sources, args.root, args.set, args.report)
        return
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="bench-scale-"))
    try:
        runs = [run for scale in args.scales for run in measure(scale, workdir, args.set)]
        report(runs)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
