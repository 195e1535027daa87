"""The dedup stage: a global fit that clusters duplicates, and a per-shard stage that keeps one per cluster.

``fit_dedup`` reads id, text and domain of every shard, sketches each distinct normalised text once, clusters
exact and near duplicates, and writes ``clusters.parquet``: one row per document (id, dup_cluster,
dup_cluster_size, drop_reason), sorted by id so equal inputs give equal bytes whatever their order.
``DedupStage`` joins each shard with it: representatives and unique documents are kept, the others dropped.

Scaling: the fit holds an id and a text index per document, and per distinct text a signature (512 bytes at 128
permutations) plus, when verifying by exact Jaccard, its shingle set (16 bytes per shingle); datasketch's
in-memory LSH adds a few hundred bytes per text. That is fine to a few million documents per machine. Beyond,
the out-of-core path writes (band, band hash, text) records to per-band files sorted by band hash, merges them
into candidate pairs and verifies with the sketch estimate (verify_with=sketch); clustering and the artifact
stay as they are.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Mapping
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


@dataclass(frozen=True)
class _Corpus:
    """Per document: id, text length and which distinct text it has; per distinct text: its group and sketch."""

    ids: list[str]
    lengths: np.ndarray
    text_of_doc: np.ndarray
    text_groups: np.ndarray
    sketches: Sketches | None


def fit_dedup(input_urls: list[str], cfg: DedupConfig, artifact_dir: str) -> dict[str, str]:
    """Cluster the duplicates of all input shards (schema CLEAN); write ``clusters.parquet`` and ``summary.json``.

    Returns {"clusters": url, "summary": url}. Raises ValueError when two documents share an id, since the
    artifact is keyed by id.
    """
    corpus = _read_corpus(input_urls, cfg)
    n_docs, n_texts = len(corpus.ids), len(corpus.text_groups)
    rank = representative_rank(corpus.ids, corpus.lengths, cfg.representative)
    text_rank = np.full(n_texts, n_docs, dtype=np.int64)
    np.minimum.at(text_rank, corpus.text_of_doc, rank)
    doc_at_rank = np.argsort(rank)
    near = (
        near_duplicate_roots(corpus.sketches, text_rank, corpus.text_groups, cfg)
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


def _read_corpus(input_urls: list[str], cfg: DedupConfig) -> _Corpus:
    """Read the needed columns shard by shard, sketching each distinct normalised text the first time it appears."""
    ids: list[str] = []
    lengths: list[int] = []
    text_of_doc: list[int] = []
    text_index: dict[bytes, int] = {}
    text_groups: list[str] = []
    parts: list[Sketches] = []
    for url in input_urls:
        table = storage.read_parquet(url, columns=_FIT_COLUMNS)
        new_texts: list[str] = []
        for doc_id, text, domain in zip(*(table.column(c).to_pylist() for c in _FIT_COLUMNS), strict=True):
            normalized = normalize_text(text, cfg.ignore)
            namespace = domain if cfg.scope == "domain" else ""
            key = exact_key(normalized, text, namespace) if cfg.exact else doc_id.encode()
            row = text_index.get(key)
            if row is None:
                row = text_index[key] = len(text_index)
                new_texts.append(normalized)
                text_groups.append(namespace)
            ids.append(doc_id)
            lengths.append(len(text))
            text_of_doc.append(row)
        if cfg.method != "none" and new_texts:
            parts.append(sketch_texts(new_texts, cfg))
    _check_unique(ids)
    sketches = Sketches.concat(parts) if cfg.method != "none" and parts else None
    _, groups = np.unique(np.array(text_groups, dtype=str), return_inverse=True)
    return _Corpus(
        ids,
        np.array(lengths, dtype=np.int64),
        np.array(text_of_doc, dtype=np.int64),
        groups.astype(np.int64),
        sketches,
    )


@functools.lru_cache(maxsize=1)
def _load_clusters(url: str, version: str) -> pa.Table:
    """The clusters artifact at ``url``; ``version`` only keys the cache."""
    return storage.read_parquet(url).combine_chunks()


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
        fs, path = storage.filesystem(self.clusters_url)
        return _load_clusters(self.clusters_url, fs.ukey(path))

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


def fit_stage(inputs: list[str], cfg: PipelineConfig, shared: dict[str, str], artifact_dir: str) -> dict[str, str]:
    return fit_dedup(inputs, cfg.dedup, artifact_dir)


def build_stage(cfg: PipelineConfig, artifacts: dict[str, str]) -> DedupStage:
    return DedupStage(cfg.dedup, artifacts)
