"""The dedup stage: a fit that clusters duplicates (a per-shard map, then a reduce), and a per-shard stage that keeps
one per cluster.

``sketch_shard`` (the fit's map, `fit_map`) reads id, text and domain of one shard, normalises each document, keys
it for exact matching and sketches each text the shard holds once (MinHash signature or SimHash fingerprint, and
its shingle set when pairs are verified by exact Jaccard), writing one partial Parquet file per shard: this is the
CPU-heavy part, and it runs wherever the shards run (worker processes, Dask), resumably per shard.
``cluster_partials`` (the reduce) reads the partials in input order, takes each distinct text's sketch from its first
occurrence, clusters exact and near duplicates, and writes ``clusters.parquet``: one row per document (id,
dup_cluster, dup_cluster_size, drop_reason), sorted by id so equal inputs give equal bytes whatever their order.
``DedupStage`` joins each shard with it: representatives and unique documents are kept, the others dropped.

Scaling: the reduce still holds an id and a text index per document, and per distinct text a signature (512 bytes
at 128 permutations) plus, when verifying by exact Jaccard, its shingle set (8 bytes per shingle); datasketch's
in-memory LSH adds a few hundred bytes per text. That is fine to a few million documents per machine; the band
keys, candidate pairs and connected components are next to move out of the reduce into partitioned tasks.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pretrain_core import schema as contract
from pretrain_core import storage
from pretrain_core.dedup.config import DedupConfig
from pretrain_core.dedup.exact import exact_key
from pretrain_core.dedup.near import NearDuplicates, Sketches, near_duplicate_roots, sketch_texts
from pretrain_core.dedup.normalize import normalize_text
from pretrain_core.dedup.shingles import ShingleSets
from pretrain_core.stage import ShardOutput

if TYPE_CHECKING:
    from pretrain_core.config import PipelineConfig

EXACT_DUPLICATE = "exact_duplicate"
NEAR_DUPLICATE = "near_duplicate"
CLUSTERS = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("dup_cluster", pa.string(), nullable=False),
        pa.field("dup_cluster_size", pa.int32(), nullable=False),
        pa.field("drop_reason", pa.string(), nullable=True),  # null: kept (representative or unique)
    ]
)
_FIT_COLUMNS = ["id", "text", "domain"]
# A shard's part of the fit: per document its exact key, text group and length; per first occurrence of a key in the
# shard its sketch (null on later occurrences) and, for exact-Jaccard verification, its shingle hashes.
PARTIAL = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("length", pa.int64(), nullable=False),
        pa.field("key", pa.binary(), nullable=False),
        pa.field("group", pa.string(), nullable=False),
        pa.field("shingle_count", pa.int64(), nullable=True),
        pa.field("sketch", pa.binary(), nullable=True),
        pa.field("shingles", pa.list_(pa.uint64()), nullable=True),
    ]
)


@dataclass(frozen=True)
class _Corpus:
    """Per document: id, text length and which distinct text it has; per distinct text: its group and sketch
    (the shingle sets are read back for the texts that need comparing, `load_sets`)."""

    ids: list[str]
    lengths: np.ndarray
    text_of_doc: np.ndarray
    text_groups: np.ndarray
    sketches: Sketches | None
    load_sets: Callable[[np.ndarray], ShingleSets] | None  # shingle sets of given texts, read again when needed


def sketch_shard(input_url: str, cfg: DedupConfig, partial_url: str) -> None:
    """The fit's map: key and sketch one input shard (schema CLEAN) into a `PARTIAL` file at ``partial_url``."""
    table = storage.read_parquet(input_url, columns=_FIT_COLUMNS)
    ids, texts, domains = (table.column(c).to_pylist() for c in _FIT_COLUMNS)
    keys, groups, first_rows, first_texts = [], [], [], []
    seen: set[bytes] = set()
    for row, (doc_id, text, domain) in enumerate(zip(ids, texts, domains, strict=True)):
        normalized = normalize_text(text, cfg.ignore)
        namespace = domain if cfg.scope == "domain" else ""
        key = exact_key(normalized, text, namespace) if cfg.exact else doc_id.encode()
        if key not in seen:
            seen.add(key)
            first_rows.append(row)
            first_texts.append(normalized)
        keys.append(key)
        groups.append(namespace)
    n = len(ids)
    counts: list[int | None] = [None] * n
    sketch: list[bytes | None] = [None] * n
    shingles: list[list[int] | None] = [None] * n
    if cfg.method != "none" and first_texts:
        sketches = sketch_texts(first_texts, cfg)
        for k, row in enumerate(first_rows):
            counts[row] = int(sketches.sizes[k])
            sketch[row] = sketches.sketch[k].tobytes()
            if sketches.sets is not None:
                shingles[row] = sketches.sets.of(k).tolist()
    lengths = [len(t) for t in texts]
    storage.write_parquet(partial_url, pa.table([ids, lengths, keys, groups, counts, sketch, shingles], schema=PARTIAL))


def fit_dedup(input_urls: list[str], cfg: DedupConfig, artifact_dir: str) -> dict[str, str]:
    """The whole fit in this process: sketch every input shard (schema CLEAN) into ``artifact_dir/partials``, then
    cluster them (`cluster_partials`)."""
    partials = [storage.join(artifact_dir, "partials", f"{i:05d}.parquet") for i in range(len(input_urls))]
    for url, partial in zip(input_urls, partials, strict=True):
        sketch_shard(url, cfg, partial)
    return cluster_partials(partials, cfg, artifact_dir)


def cluster_partials(partial_urls: list[str], cfg: DedupConfig, artifact_dir: str) -> dict[str, str]:
    """The fit's reduce: cluster the duplicates of all input shards from their partials (`sketch_shard`, in input
    order); write ``clusters.parquet`` and ``summary.json``.

    Returns {"clusters": url, "summary": url}. Raises ValueError when two documents share an id, since the
    artifact is keyed by id.
    """
    corpus = _read_partials(partial_urls, cfg)
    n_docs, n_texts = len(corpus.ids), len(corpus.text_groups)
    rank = representative_rank(corpus.ids, corpus.lengths, cfg.representative)
    text_rank = np.full(n_texts, n_docs, dtype=np.int64)
    np.minimum.at(text_rank, corpus.text_of_doc, rank)
    doc_at_rank = np.argsort(rank)
    near = (
        near_duplicate_roots(corpus.sketches, text_rank, corpus.text_groups, cfg, corpus.load_sets)
        if corpus.sketches is not None
        else NearDuplicates(np.arange(n_texts, dtype=np.int64), 0, 0, 0, 0, 0, 0)
    )
    representative = doc_at_rank[text_rank[near.roots[corpus.text_of_doc]]]
    sizes = np.bincount(representative, minlength=n_docs)[representative]
    same_text = corpus.text_of_doc == corpus.text_of_doc[representative]
    is_kept = representative == np.arange(n_docs)
    reasons = [
        None if kept else EXACT_DUPLICATE if same else NEAR_DUPLICATE
        for kept, same in zip(is_kept.tolist(), same_text.tolist(), strict=True)
    ]
    ids = np.array(corpus.ids, dtype=object)
    clusters = pa.table(
        [ids.tolist(), ids[representative].tolist(), sizes.astype(np.int32), reasons], schema=CLUSTERS
    ).sort_by("id")
    summary = {
        "documents": n_docs,
        "distinct_texts": n_texts,
        "exact_duplicates": int(np.count_nonzero(~is_kept & same_text)),
        "near_duplicates": int(np.count_nonzero(~is_kept & ~same_text)),
        "clusters": int(np.count_nonzero(is_kept & (sizes > 1))),
        "largest_cluster": int(sizes.max(initial=0)),
        "candidate_pairs": near.candidate_pairs,
        "verified_pairs": near.verified_pairs,
        "guard_splits": near.guard_splits,
        "near_below_threshold": near.below_threshold,
        "bands": near.lsh_bands,
        "rows": near.lsh_rows,
    }
    urls = {
        "clusters": storage.join(artifact_dir, "clusters.parquet"),
        "summary": storage.join(artifact_dir, "summary.json"),
    }
    storage.write_parquet(urls["clusters"], clusters)
    storage.write_json(urls["summary"], summary)
    return urls


def representative_rank(ids: list[str], lengths: np.ndarray, rule: str) -> np.ndarray:
    """Each document's place in keep-preference order (0 is kept first): by ``rule``, ties by smallest id."""
    id_array = np.array(ids, dtype=str)
    order = np.lexsort((id_array, -lengths)) if rule == "longest" else np.argsort(id_array, kind="stable")
    rank = np.empty(len(ids), dtype=np.int64)
    rank[order] = np.arange(len(ids), dtype=np.int64)
    return rank


def _read_partials(partial_urls: list[str], cfg: DedupConfig) -> _Corpus:
    """Documents in input order; each distinct text (by exact key) indexed at its first occurrence, with the
    sketch that occurrence's shard made. Shingle sets are not read here (they are most of a partial): only the
    texts of candidate pairs are compared, and `load_sets` reads theirs back. Sketches go from Arrow to numpy
    without a Python object per value."""
    ids: list[str] = []
    lengths: list[np.ndarray] = []
    text_of_doc: list[int] = []
    text_index: dict[bytes, int] = {}
    text_groups: list[str] = []
    firsts: list[pa.Table] = []
    first_rows: list[np.ndarray] = []  # per partial, the rows where its new texts first occur
    for url in partial_urls:
        part = storage.read_parquet(url, columns=[n for n in PARTIAL.names if n != "shingles"])
        first = np.zeros(part.num_rows, dtype=bool)
        for row, key in enumerate(part.column("key").to_pylist()):
            index = text_index.get(key)
            if index is None:
                index = text_index[key] = len(text_index)
                first[row] = True
            text_of_doc.append(index)
        new = part.filter(pa.array(first))
        text_groups += new.column("group").to_pylist()
        first_rows.append(np.flatnonzero(first))
        if cfg.method != "none":
            firsts.append(new.select(["shingle_count", "sketch"]))
        ids += part.column("id").to_pylist()
        lengths.append(part.column("length").to_numpy())
    _check_unique(ids)
    sketches = _sketches(pa.concat_tables(firsts), cfg) if firsts and sum(t.num_rows for t in firsts) else None
    _, groups = np.unique(np.array(text_groups, dtype=str), return_inverse=True)
    load_sets = None
    if sketches is not None and cfg.verify_with == "jaccard":
        load_sets = functools.partial(_load_sets, partial_urls, first_rows, sketches.sizes)
    return _Corpus(
        ids,
        np.concatenate(lengths) if lengths else np.empty(0, dtype=np.int64),
        np.array(text_of_doc, dtype=np.int64),
        groups.astype(np.int64),
        sketches,
        load_sets,
    )


def _sketches(firsts: pa.Table, cfg: DedupConfig) -> Sketches:
    """The distinct texts' sketches as arrays again (a signature row of uint32, or a uint64 fingerprint)."""
    dtype = np.uint32 if cfg.method == "minhash" else np.uint64
    sketch = np.frombuffer(b"".join(firsts.column("sketch").to_pylist()), dtype=dtype)
    if cfg.method == "minhash":
        sketch = sketch.reshape(firsts.num_rows, cfg.num_perm)
    sizes = firsts.column("shingle_count").to_numpy(zero_copy_only=False).astype(np.int64)
    return Sketches(sizes, sketch, None)


def _load_sets(
    partial_urls: list[str], first_rows: list[np.ndarray], sizes: np.ndarray, texts: np.ndarray
) -> ShingleSets:
    """The shingle sets of the given texts (sorted global indices), in that order, read from the partials into one
    array sized from the texts' shingle counts (`sizes`).

    Texts are numbered in partial order and, within a partial, in row order, so each partial's share of ``texts``
    is one run of it, in row order."""
    offsets = np.concatenate(([0], np.cumsum(sizes[texts]))).astype(np.int64)
    flat = np.empty(int(offsets[-1]), dtype=np.uint64)
    ends = np.cumsum([len(rows) for rows in first_rows])
    done = 0  # texts filled so far
    for part, (url, rows) in enumerate(zip(partial_urls, first_rows, strict=True)):
        start = ends[part] - len(rows)
        wanted = texts[(texts >= start) & (texts < ends[part])] - start
        if not len(wanted):
            continue
        column = storage.read_parquet(url, columns=["shingles"]).column("shingles")
        values = column.take(pa.array(rows[wanted])).combine_chunks().flatten()
        flat[offsets[done] : offsets[done + len(wanted)]] = values.to_numpy(zero_copy_only=False)
        done += len(wanted)
    # Jaccard reads the hashes only: the per-shingle counts (SimHash's weights) are a view of one 1, not memory.
    return ShingleSets(flat, np.broadcast_to(np.int64(1), flat.shape), offsets)


def _check_unique(ids: list[str]) -> None:
    if len(set(ids)) != len(ids):
        repeated = sorted(i for i, n in Counter(ids).items() if n > 1)
        raise ValueError(f"dedup: {len(repeated)} document ids occur more than once, e.g. {repeated[:3]}")


class DedupStage:
    """Keeps each cluster's representative and unique documents; drops the rest with their reason.

    The stage holds only the artifact's URL, so it pickles to a few strings; the clusters table is loaded on
    first use and cached per process (keyed by the file's fsspec ``ukey``, so a refitted artifact is reloaded).
    """

    name = "dedup"
    schema = contract.DEDUP

    def __init__(self, cfg: DedupConfig, artifacts: Mapping[str, str]) -> None:
        self.cfg = cfg
        self.clusters_url = artifacts["clusters"]

    def clusters(self) -> pa.Table:
        return storage.read_artifact(self.clusters_url)

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
        return ShardOutput(kept=out.filter(keep), dropped=dropped, stats=stats)


def settings_of(cfg: PipelineConfig) -> dict[str, Any]:
    return {"dedup": cfg.dedup}


def fit_map(input_url: str, cfg: PipelineConfig, shared: dict[str, str], partial_url: str) -> None:
    sketch_shard(input_url, cfg.dedup, partial_url)


def fit_stage(partials: list[str], cfg: PipelineConfig, shared: dict[str, str], artifact_dir: str) -> dict[str, str]:
    return cluster_partials(partials, cfg.dedup, artifact_dir)


def build_stage(cfg: PipelineConfig, artifacts: dict[str, str]) -> DedupStage:
    return DedupStage(cfg.dedup, artifacts)
