"""The dedup stage: a fit that clusters duplicates (a per-shard map, then a partitioned reduce), and a per-shard stage
that keeps one per cluster.

``sketch_shard`` (the fit's map, `fit_map`) reads id, text and domain of one shard, normalises each document, keys
it for exact matching and sketches each text the shard holds once (MinHash signature or SimHash fingerprint, and
its shingle set when pairs are verified by exact Jaccard), writing its rows split by exact key into
`dedup.partitions` files: this is the CPU-heavy part, and it runs wherever the shards run (worker processes,
Dask), resumably per shard. The reduce (`partitioned.PartitionedReduce`) is rounds of jobs that each hold one part
of the corpus: grouping exact duplicates, LSH buckets, verification, connected components and the cluster guard,
ending in one clusters file per input shard (id, dup_cluster, dup_cluster_size, drop_reason), sorted by id, so
equal inputs give equal bytes whatever their order. ``DedupStage`` joins each shard with its file:
representatives and unique documents are kept, the others dropped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pretrain_core import schema as contract
from pretrain_core import storage
from pretrain_core.batches import size_batches
from pretrain_core.card.stats import cluster_sizes
from pretrain_core.dedup.config import DedupConfig
from pretrain_core.dedup.exact import exact_key
from pretrain_core.dedup.near import Sketches, sketch_texts
from pretrain_core.dedup.normalize import normalize_arrow
from pretrain_core.dedup.partitioned import (
    CLUSTERS,
    EXACT_DUPLICATE,
    IDS,
    IDS_FILE,
    KEYED,
    KEYS_FILE,
    NEAR_DUPLICATE,
    PartitionedReduce,
    part_of,
)
from pretrain_core.stage import ShardOutput

if TYPE_CHECKING:
    from pretrain_core.config import PipelineConfig

__all__ = ["CLUSTERS", "EXACT_DUPLICATE", "NEAR_DUPLICATE", "DedupStage", "fit_dedup", "read_clusters", "sketch_shard"]
_FIT_COLUMNS = ["id", "text", "domain"]
_BATCH_CHARS = 1 << 22  # characters normalised and sketched per pass of the map


def sketch_shard(input_url: str, cfg: DedupConfig, partial_url: str) -> None:
    """The fit's map: key and sketch one input shard (schema CLEAN) into the directory ``partial_url``: its rows
    split by exact key into `cfg.partitions` row groups (`partitioned.KEYED`), and its ids split by id (for the
    reduce's check that ids are unique)."""
    table = storage.read_parquet(input_url, columns=_FIT_COLUMNS)
    ids, domains = table.column("id").to_pylist(), table.column("domain").to_pylist()
    texts = table.column("text").combine_chunks()
    lengths = pc.utf8_length(texts).to_numpy(zero_copy_only=False).astype(np.int64)
    keys: list[bytes] = []
    groups: list[str] = []
    sketched: list[tuple[pa.Array, pa.Array, pa.Array]] = []
    seen: set[bytes] = set()
    for lo, hi in size_batches(lengths.tolist(), _BATCH_CHARS):
        normalized = normalize_arrow(texts.slice(lo, hi - lo), cfg.ignore)
        utf8, utf8_bounds = normalized.utf8()
        firsts: list[int] = []
        for k, row in enumerate(range(lo, hi)):
            namespace = domains[row] if cfg.scope == "domain" else ""
            body = utf8[utf8_bounds[k] : utf8_bounds[k + 1]]
            raw = "" if body else texts[row].as_py()  # the raw text keys only texts that normalise to nothing
            key = exact_key(body, raw, namespace) if cfg.exact else ids[row].encode()
            if key not in seen:
                seen.add(key)
                firsts.append(k)
            keys.append(key)
            groups.append(namespace)
        sketches = sketch_texts(normalized.take(firsts), cfg) if cfg.method != "none" and firsts else None
        sketched.append(_sketch_columns(hi - lo, np.asarray(firsts, dtype=np.int64), sketches))
    counts, sketch, shingles = (
        pa.concat_arrays([columns[c] for columns in sketched]) if sketched else pa.array([], KEYED.field(f).type)
        for c, f in enumerate(("shingle_count", "sketch", "shingles"))
    )
    keyed = pa.table([ids, lengths, keys, groups, counts, sketch, shingles], schema=KEYED)
    id_table = pa.table([ids], schema=IDS)
    for name, table, parts in (
        (KEYS_FILE, keyed, part_of(keys, cfg.partitions)),
        (IDS_FILE, id_table, part_of([i.encode() for i in ids], cfg.partitions)),
    ):
        order = np.argsort(parts, kind="stable")
        bounds = np.searchsorted(parts[order], np.arange(cfg.partitions + 1))
        split = [table.take(pa.array(order[bounds[p] : bounds[p + 1]])) for p in range(cfg.partitions)]
        storage.write_parquet_parts(storage.join(partial_url, name), split)


def _sketch_columns(rows: int, firsts: np.ndarray, sketches: Sketches | None) -> tuple[pa.Array, pa.Array, pa.Array]:
    """A batch's `shingle_count`, `sketch` and `shingles` columns, built from arrays: set on the rows `firsts` (the
    first of each exact key), null elsewhere."""
    if sketches is None:
        return pa.nulls(rows, pa.int64()), pa.nulls(rows, pa.binary()), pa.nulls(rows, pa.list_(pa.uint64()))
    missing = np.ones(rows, dtype=bool)
    missing[firsts] = False
    sizes = np.zeros(rows, dtype=np.int64)
    sizes[firsts] = sketches.sizes
    rows_bytes = np.zeros((rows, sketches.sketch[0].nbytes), dtype=np.uint8)
    rows_bytes[firsts] = sketches.sketch.view(np.uint8).reshape(len(firsts), -1)
    fixed = pa.FixedSizeBinaryArray.from_buffers(pa.binary(rows_bytes.shape[1]), rows, [None, pa.py_buffer(rows_bytes)])
    sketch = pc.if_else(pa.array(missing), pa.scalar(None, pa.binary()), fixed.cast(pa.binary()))
    if sketches.sets is None:
        shingles = pa.nulls(rows, pa.list_(pa.uint64()))
    else:
        lengths = np.zeros(rows, dtype=np.int64)
        lengths[firsts] = sketches.sets.sizes
        offsets = np.zeros(rows + 1, dtype=np.int32)
        np.cumsum(lengths, out=offsets[1:])
        shingles = pa.ListArray.from_arrays(pa.array(offsets), pa.array(sketches.sets.hashes), mask=pa.array(missing))
    return pa.array(sizes, mask=missing), sketch, shingles


def fit_dedup(input_urls: list[str], cfg: DedupConfig, artifact_dir: str) -> dict[str, str]:
    """The whole fit in this process: sketch every input shard (schema CLEAN) into ``artifact_dir/partials``, run
    the reduce's jobs one after another and return its artifacts (`PartitionedReduce.finish`). Always from
    scratch: what an earlier fit left in ``artifact_dir`` is removed first."""
    for stale in ("partials", "reduce"):
        storage.remove(storage.join(artifact_dir, stale))
    partials = [storage.join(artifact_dir, "partials", f"{i:05d}") for i in range(len(input_urls))]
    for url, partial in zip(input_urls, partials, strict=True):
        sketch_shard(url, cfg, partial)
    reduce = PartitionedReduce(tuple(partials), cfg, artifact_dir)
    while jobs := reduce.next_jobs():
        for job in jobs:
            reduce.run(job)
    return reduce.finish(input_urls)


def read_clusters(clusters_url: str) -> pa.Table:
    """Every document's row of a fit's clusters (the ``clusters`` artifact: an index of per-shard files), by id."""
    return DedupStage(DedupConfig(), {"clusters": clusters_url}).clusters().sort_by("id")


def representative_rank(ids: list[str], lengths: np.ndarray, rule: str) -> np.ndarray:
    """Each document's place in keep-preference order (0 is kept first): by ``rule``, ties by smallest id."""
    id_array = np.array(ids, dtype=str)
    order = np.lexsort((id_array, -lengths)) if rule == "longest" else np.argsort(id_array, kind="stable")
    rank = np.empty(len(ids), dtype=np.int64)
    rank[order] = np.arange(len(ids), dtype=np.int64)
    return rank


class DedupStage:
    """Keeps each cluster's representative and unique documents; drops the rest with their reason.

    The stage holds only the artifact's URL, so it pickles to a few strings. A shard job binds it to its input
    shards (`for_inputs`), so it reads only their clusters files; unbound, it reads every shard's (small inputs,
    tests).
    """

    name = "dedup"
    schema = contract.DEDUP

    def __init__(self, cfg: DedupConfig, artifacts: Mapping[str, str], inputs: Sequence[str] | None = None) -> None:
        self.cfg = cfg
        self.clusters_url = artifacts["clusters"]
        self.inputs = None if inputs is None else tuple(inputs)

    def for_inputs(self, inputs: Sequence[str]) -> DedupStage:
        return DedupStage(self.cfg, {"clusters": self.clusters_url}, inputs)

    def clusters(self) -> pa.Table:
        index: dict[str, str] = storage.read_json(self.clusters_url)
        urls = list(index.values()) if self.inputs is None else [index[url] for url in self.inputs if url in index]
        return pa.concat_tables([storage.read_parquet(url) for url in urls]) if urls else CLUSTERS.empty_table()

    def process(self, table: pa.Table) -> ShardOutput:
        clusters = self.clusters()
        position = pc.index_in(table.column("id"), value_set=clusters.column("id").combine_chunks())
        if position.null_count:
            missing = table.column("id").filter(pc.is_null(position)).to_pylist()
            raise ValueError(
                f"dedup: {len(missing)} documents were not seen by fit_dedup, e.g. {missing[:3]}; refit on these inputs"
            )
        joined = clusters.take(position)
        out = table.select(contract.CLEAN.names)
        for name in ("dup_cluster", "dup_cluster_size"):
            out = out.append_column(contract.DEDUP.field(name), joined.column(name))
        reason = joined.column("drop_reason")
        keep = pc.is_null(reason)
        drop = pc.invert(keep)
        dropped = out.filter(drop).append_column(contract.DROP_REASON, reason.filter(drop))
        reasons = Counter(reason.filter(drop).to_pylist())
        sizes = joined.column("dup_cluster_size")
        stats = {
            "exact_duplicates": float(reasons[EXACT_DUPLICATE]),
            "near_duplicates": float(reasons[NEAR_DUPLICATE]),
            "clusters": float(pc.sum(pc.and_(keep, pc.greater(sizes, 1))).as_py() or 0),
            "largest_cluster": float(pc.max(sizes).as_py() or 0),
        }
        stats |= cluster_sizes(sizes.filter(keep).to_pylist())  # each kept representative's cluster, for the card
        return ShardOutput(kept=out.filter(keep), dropped=dropped, stats=stats)


def settings_of(cfg: PipelineConfig) -> dict[str, Any]:
    """What the outputs depend on: not how many parts the reduce used or how it shuffled them (the fit's own hash
    includes those)."""
    return {"dedup": cfg.dedup.model_dump(mode="json", exclude={"partitions", "shuffle_fan_in"})}


def fit_settings_of(cfg: PipelineConfig) -> dict[str, Any]:
    return {"dedup": cfg.dedup}


def fit_map(input_url: str, cfg: PipelineConfig, shared: dict[str, str], partial_url: str) -> None:
    sketch_shard(input_url, cfg.dedup, partial_url)


def fit_reduce(
    partials: list[str], cfg: PipelineConfig, shared: dict[str, str], artifact_dir: str
) -> PartitionedReduce:
    return PartitionedReduce(tuple(partials), cfg.dedup, artifact_dir)


def build_stage(cfg: PipelineConfig, artifacts: dict[str, str]) -> DedupStage:
    return DedupStage(cfg.dedup, artifacts)
