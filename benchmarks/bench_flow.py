"""What orchestration costs: the corpus DAG as the Prefect flow `pretrain corpus` runs (`corpus_rebuild`, with its
temporary API server) against the same stages run by `CorpusPipeline.run_stage` without Prefect, on the same
corpus and the same worker processes.

An empty flow (the temporary API server started and stopped, no task) gives Prefect's fixed cost. The flow runs
twice: with a Prefect task per job (`execution.jobs_per_task=1`: every shard, fit map and reduce job
a task, as before jobs were grouped) and with the default groups (about 4 tasks per worker and round,
`pretrain_core/job_groups.py`). Every run is a fresh child process writing to a fresh output root; its CPU seconds
(its worker processes' and the API server's included) come from `os.wait4`. The corpus is `scale_corpus.py`'s
(replicas of the demo corpus); MB is the text ingest hands on. The outputs of the pipeline and flow runs are
compared byte for byte (every Parquet file but the fits' partials and scratch).

    python benchmarks/bench_flow.py                 # 4x the demo corpus, 2 worker processes (about 8 minutes)
    python benchmarks/bench_flow.py --scale 16      # about 20 minutes
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import hashlib
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from bench_scale import input_megabytes, overrides
from scale_corpus import build

from pretrain_core.config import load_config
from pretrain_core.pipeline import CORPUS_STAGES, CorpusPipeline

RUNS = {
    "an empty flow (Prefect's fixed cost)": ("empty", []),
    "pipeline, no Prefect": ("pipeline", []),
    "flow, a task per job": ("flow", ["execution.jobs_per_task=1"]),
    "flow, grouped jobs (default)": ("flow", []),
}


def run_child(mode: str, sources_file: Path, root: Path, settings: Sequence[str]) -> tuple[float, float]:
    """CPU seconds (children included) and wall seconds of a child process that runs every corpus stage."""
    command = [sys.executable, __file__, "--child", mode, "--sources", str(sources_file), "--root", str(root)]
    command += [f"--set={setting}" for setting in settings]
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"the {mode} run failed at {root} (rerun the child by hand to see why)")
    return usage.ru_utime + usage.ru_stime, time.perf_counter() - started


def child(mode: str, sources_file: Path, root: Path, settings: Sequence[str]) -> None:
    cfg_overrides = overrides(sources_file, root, settings)
    if mode == "empty":
        from prefect import flow

        flow(name="empty")(lambda: None)()
        return
    if mode == "flow":
        from flows.corpus_rebuild import corpus_rebuild

        corpus_rebuild(None, cfg_overrides)
        return
    pipeline = CorpusPipeline(load_config(None, cfg_overrides))
    for stage in CORPUS_STAGES:
        pipeline.run_stage(stage)


def outputs_digest(root: Path) -> str:
    """One digest over every Parquet output's path and bytes, less the fits' partials and reduce scratch."""
    digest = hashlib.sha256()
    for path in sorted((root / "corpus").rglob("*.parquet")):
        relative = path.relative_to(root)
        if "partials" in relative.parts or "reduce" in relative.parts:
            continue
        digest.update(str(relative).encode() + path.read_bytes())
    return digest.hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=int, default=4, help="replicas of the demo corpus")
    parser.add_argument("--processes", type=int, default=2, help="worker processes (execution.processes)")
    parser.add_argument("--child", choices=["empty", "pipeline", "flow"], help=argparse.SUPPRESS)
    parser.add_argument("--sources", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--root", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--set", dest="settings", action="append", default=[], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.sources, args.root, args.settings)
        return
    with tempfile.TemporaryDirectory() as workdir:
        sources_file = build(Path(workdir) / "corpus", args.scale)
        workers = [f"execution.processes={args.processes}"]
        results: dict[str, tuple[float, float]] = {}
        digests: set[str] = set()
        for label, (mode, settings) in RUNS.items():
            root = Path(workdir) / mode / str(len(results))
            results[label] = run_child(mode, sources_file, root, [*workers, *settings])
            if mode != "empty":
                digests.add(outputs_digest(root))
            print(f"{label}: {results[label][0]:.1f} CPU s, {results[label][1]:.1f} s wall", flush=True)
        # what ingest handed on (clean's input), in the last run: every run but the empty one wrote the same
        megabytes = input_megabytes(sources_file, root, "clean")[0]
    baseline = results["pipeline, no Prefect"][0]
    print(f"\n{megabytes:.1f} MB of text ({args.scale}x the demo corpus), {args.processes} worker processes")
    print("| run | CPU s | wall s | MB/s per core | GB per core-hour | CPU vs no Prefect |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, (cpu, wall) in results.items():
        rate = megabytes / cpu
        rates = "| - | -" if RUNS[label][0] == "empty" else f"| {rate:.2f} | {rate * 3.6:.2f}"
        print(f"| {label} | {cpu:.1f} | {wall:.1f} {rates} | {cpu / baseline:.2f}x |")
    print(f"outputs byte-identical across the runs: {len(digests) == 1}")


if __name__ == "__main__":
    main()
