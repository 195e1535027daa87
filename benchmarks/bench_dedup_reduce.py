"""Memory of dedup's fit when the corpus grows: the driver stays flat and each job holds one part of the corpus.

For each scale, the texts of `scale_corpus.replica` (the demo corpus replicated with near-duplicates and new
documents; no host files) are written as shards of 2,000 documents. A driver child process then runs the fit as a
cluster would: every map job (`sketch_shard`, one per shard) and every job of every reduce round
(`PartitionedReduce`) in a fresh worker process, so each job's peak RSS is its own (`resource.getrusage` in the
worker), and the driver only plans rounds and writes the summary (its own peak RSS, without its workers').
Printed per scale: documents, parts, the driver's peak RSS, the largest map job's and the largest reduce job's
peak RSS, and the CPU seconds of map and reduce jobs summed.

    python benchmarks/bench_dedup_reduce.py                          # scales 1 4 16, parts 2 per replica
    python benchmarks/bench_dedup_reduce.py --scales 16 --parts 8   # parts fixed: jobs grow with the corpus
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import json
import multiprocessing
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pyarrow as pa
from scale_corpus import demo_documents_by_source, replica

from pretrain_core import storage
from pretrain_core.dedup.config import DedupConfig
from pretrain_core.dedup.partitioned import PartitionedReduce, ReduceJob
from pretrain_core.dedup.stage import sketch_shard

SHARD_DOCS = 2000


def write_shards(scale: int, out: Path) -> tuple[list[str], int]:
    """The scaled corpus as Parquet shards of id, text and domain; returns their URLs and the document count."""
    docs = demo_documents_by_source()
    rows: list[dict[str, str]] = []
    for number in range(scale):
        texts = replica(docs, number)
        rows += [
            {"id": f"{number}-{index}", "text": text, "domain": doc.domain}
            for index, ((_, doc), text) in enumerate(zip(docs, texts, strict=True))
        ]
    urls = []
    for start in range(0, len(rows), SHARD_DOCS):
        url = str(out / f"shard-{start // SHARD_DOCS:05d}.parquet")
        storage.write_parquet(url, pa.Table.from_pylist(rows[start : start + SHARD_DOCS]))
        urls.append(url)
    return urls, len(rows)


def _measured(work: Callable[[], None]) -> tuple[float, float]:
    """Run `work` in this (fresh) worker; its peak RSS in MB and CPU seconds."""
    started = time.process_time()
    work()
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, time.process_time() - started


def map_job(url: str, cfg: DedupConfig, partial: str) -> tuple[float, float]:
    return _measured(lambda: sketch_shard(url, cfg, partial))


def reduce_job(reduce: PartitionedReduce, job: ReduceJob) -> tuple[float, float]:
    return _measured(lambda: reduce.run(job))


def drive(urls: list[str], parts: int, workdir: Path) -> dict[str, Any]:
    """The fit as a driver runs it: every job in a fresh worker process; the jobs' peak RSS and CPU."""
    cfg = DedupConfig(partitions=parts)
    partials = [str(workdir / "partials" / f"{i:05d}") for i in range(len(urls))]
    reduce = PartitionedReduce(tuple(partials), cfg, str(workdir / "fit"))
    context = multiprocessing.get_context("spawn")
    out: dict[str, Any] = {"map_rss": 0.0, "map_cpu": 0.0, "reduce_rss": 0.0, "reduce_cpu": 0.0, "rounds": 0}
    with ProcessPoolExecutor(max_workers=2, mp_context=context, max_tasks_per_child=1) as pool:
        for rss, cpu in pool.map(map_job, urls, [cfg] * len(urls), partials):
            out["map_rss"], out["map_cpu"] = max(out["map_rss"], rss), out["map_cpu"] + cpu
        while jobs := reduce.next_jobs():
            out["rounds"] += 1
            for rss, cpu in pool.map(reduce_job, [reduce] * len(jobs), jobs):
                out["reduce_rss"], out["reduce_cpu"] = max(out["reduce_rss"], rss), out["reduce_cpu"] + cpu
    summary = storage.read_json(reduce.finish(urls)["summary"])
    out["near_duplicates"], out["exact_duplicates"] = summary["near_duplicates"], summary["exact_duplicates"]
    out["driver_rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # this process alone
    return out


def measure(scale: int, parts: int, workdir: Path) -> dict[str, Any]:
    # Shards are written by a child too: Linux keeps a process's peak RSS across exec, so a driver forked from a
    # parent holding the corpus would report the parent's peak as its own.
    listing = workdir / f"urls-{scale}x.json"
    command = [sys.executable, __file__, "--write", str(scale), "--workdir", str(workdir), "--result", str(listing)]
    subprocess.run(command, check=True)
    urls, documents = json.loads(listing.read_text())
    listing.write_text(json.dumps(urls))
    result = workdir / f"result-{scale}x.json"
    command = [sys.executable, __file__, "--driver", str(listing), "--parts", str(parts), "--workdir",
               str(workdir / f"fit-{scale}x"), "--result", str(result)]  # fmt: skip
    subprocess.run(command, check=True)
    return {"scale": scale, "documents": documents, "parts": parts, **json.loads(result.read_text())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scales", type=int, nargs="+", default=[1, 4, 16], help="replicas of the demo corpus")
    parser.add_argument("--parts", type=int, help="dedup.partitions for every scale (default: 2 per replica)")
    parser.add_argument("--workdir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--driver", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--write", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write:
        shards = args.workdir / f"shards-{args.write}x"
        shards.mkdir(parents=True)
        args.result.write_text(json.dumps(write_shards(args.write, shards)))
        return
    if args.driver:
        urls = json.loads(args.driver.read_text())
        args.result.write_text(json.dumps(drive(urls, args.parts, args.workdir)))
        return
    print(f"{'scale':>5} {'docs':>7} {'parts':>5} {'driver MB':>9} {'map job MB':>10} {'reduce job MB':>13} "
          f"{'map CPU s':>9} {'reduce CPU s':>12} {'rounds':>6} {'near dups':>9}")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        for scale in args.scales:
            row = measure(scale, args.parts or 2 * scale, Path(tmp))
            print(
                f"{row['scale']:>4}x {row['documents']:>7} {row['parts']:>5} {row['driver_rss']:>9.0f}"
                f" {row['map_rss']:>10.0f} {row['reduce_rss']:>13.0f} {row['map_cpu']:>9.1f}"
                f" {row['reduce_cpu']:>12.1f} {row['rounds']:>6} {row['near_duplicates']:>9}",
                flush=True,
            )


if __name__ == "__main__":
    main()
