"""What dedup's reduce pays for its shuffles with many parts: one level (every receiver reads a row group from
every sender) against two (`dedup.shuffle_fan_in`: a merge round between), on local disk and on an S3 API.

The demo corpus replicated (`scale_corpus.replica`, no host files) is written as shards of --shard-docs documents
and sketched once; then the same reduce runs in this process for each fan-in, every job one after another, and
each run's ranged reads (row-group reads and merge reads of consecutive row groups, counted where the storage
layer does them), wall and CPU seconds, and jobs are printed, with the clusters checked equal. `--s3` runs the
reduce against moto's S3 server on loopback, where every read is an HTTP request, as on object storage.

    python benchmarks/bench_dedup_shuffle.py --parts 96              # local disk
    python benchmarks/bench_dedup_shuffle.py --parts 32 --s3         # moto's S3 server on loopback
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import logging
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pyarrow as pa
from scale_corpus import demo_documents_by_source, replica

from pretrain_core import storage
from pretrain_core.dedup.config import DedupConfig
from pretrain_core.dedup.partitioned import PartitionedReduce
from pretrain_core.dedup.stage import read_clusters, sketch_shard

T = TypeVar("T")
reads = {"count": 0}


def counted(read: Callable[..., T]) -> Callable[..., T]:
    """The storage layer's read of row groups, counting each call (every shuffle read passes here once; a merge
    job's read of consecutive row groups is one)."""

    def call(*args: Any, **kwargs: Any) -> T:
        reads["count"] += 1
        return read(*args, **kwargs)

    return call


storage.read_parquet_parts = counted(storage.read_parquet_parts)


def write_shards(root: str, scale: int, shard_docs: int) -> list[str]:
    docs = demo_documents_by_source()
    rows = [
        {"id": f"{number}-{index}", "text": text, "domain": doc.domain}
        for number in range(scale)
        for index, ((_, doc), text) in enumerate(zip(docs, replica(docs, number), strict=True))
    ]
    urls = []
    for start in range(0, len(rows), shard_docs):
        urls.append(storage.join(root, "shards", f"{start // shard_docs:05d}.parquet"))
        storage.write_parquet(urls[-1], pa.Table.from_pylist(rows[start : start + shard_docs]))
    return urls


def run_reduce(partials: tuple[str, ...], cfg: DedupConfig, out: str, urls: list[str]) -> dict[str, Any]:
    reads["count"] = 0
    reduce = PartitionedReduce(partials, cfg, out)
    jobs = 0
    wall, cpu = time.perf_counter(), time.process_time()
    while pending := reduce.next_jobs():
        for job in pending:
            reduce.run(job)
        jobs += len(pending)
    clusters = reduce.finish(urls)["clusters"]
    return {
        "reads": reads["count"],
        "jobs": jobs,
        "wall": time.perf_counter() - wall,
        "cpu": time.process_time() - cpu,
        "clusters": read_clusters(clusters),
    }


@contextmanager
def s3_root() -> Iterator[str]:
    """moto's S3 server on loopback with a bucket; storage pointed at it."""
    import boto3
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # the server logs every request otherwise
    for name, value in (("AWS_ACCESS_KEY_ID", "bench"), ("AWS_SECRET_ACCESS_KEY", "bench")):
        os.environ.setdefault(name, value)
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1").create_bucket(Bucket="bench")
    storage.set_storage_options("s3", client_kwargs={"endpoint_url": endpoint})
    try:
        yield "s3://bench"
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=int, default=1, help="replicas of the demo corpus")
    parser.add_argument("--shard-docs", type=int, default=100, help="documents per input shard (the map's senders)")
    parser.add_argument("--parts", type=int, default=96, help="dedup.partitions")
    parser.add_argument("--fan-in", type=int, default=DedupConfig().shuffle_fan_in, help="the two-level run's")
    parser.add_argument("--s3", action="store_true", help="run on moto's S3 server on loopback, not local disk")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp, s3_root() if args.s3 else _local(tmp) as root:
        urls = write_shards(root, args.scale, args.shard_docs)
        one_level = DedupConfig(partitions=args.parts, shuffle_fan_in=max(args.parts, len(urls)))
        partials = tuple(storage.join(root, "partials", f"{i:05d}") for i in range(len(urls)))
        for url, partial in zip(urls, partials, strict=True):
            sketch_shard(url, one_level, partial)  # the map does not depend on the fan-in
        print(f"{len(urls)} shards, {args.parts} parts, on {'S3 (moto, loopback)' if args.s3 else 'local disk'}")
        results = {}
        for name, cfg in (
            ("one level", one_level),
            (f"two levels (fan-in {args.fan_in})", one_level.model_copy(update={"shuffle_fan_in": args.fan_in})),
        ):
            results[name] = run_reduce(partials, cfg, storage.join(root, name.split()[0]), urls)
    base = results["one level"]
    print(f"  {'shuffle':28} {'reads':>9} {'jobs':>6} {'wall s':>8} {'CPU s':>8} {'vs one level (wall)':>20}")
    for name, result in results.items():
        assert result["clusters"].equals(base["clusters"]), name
        ratio = base["wall"] / result["wall"]
        print(
            f"  {name:28} {result['reads']:9,} {result['jobs']:6,} {result['wall']:8.1f} {result['cpu']:8.1f} "
            f"{ratio:19.2f}x"
        )
    print("clusters identical")


@contextmanager
def _local(tmp: str) -> Iterator[str]:
    yield str(Path(tmp))


if __name__ == "__main__":
    main()
