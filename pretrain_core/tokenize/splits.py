"""Assign every document to train / validation / test once, globally, before the mixture makes any copy.

Within each domain, documents are ranked by a seeded hash of their id and the first ones go to validation, the
next to test, so the assignment is independent of shard layout and no document (nor any copy of it) can land in
two splits. Counts are per domain with a floor (``min_heldout_docs``), so even a small domain is evaluated.
Assigning before the mixture lets its plan count training documents only, so the weights hold in the train split.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from pretrain_core import storage
from pretrain_core.tokenize.config import PackConfig
from pretrain_core.tokenize.keys import doc_key

if TYPE_CHECKING:
    from pretrain_core.config import PipelineConfig

SPLITS = ("train", "validation", "test")
SPLITS_FILE = "splits.parquet"
SPLITS_SUMMARY_FILE = "splits.json"

SPLITS_SCHEMA = pa.schema([pa.field("id", pa.string(), nullable=False), pa.field("split", pa.string(), nullable=False)])
# The PackConfig fields the assignment depends on (the splits' config hash covers these, not the packing settings).
SPLIT_SETTINGS = frozenset({"validation_fraction", "test_fraction", "min_heldout_docs", "split_seed"})


def heldout_counts(n_docs: int, cfg: PackConfig) -> tuple[int, int]:
    """(validation, test) document counts for a domain of ``n_docs``; at least one document stays in train.

    When the domain is too small for both wishes, the held-out documents are dealt out alternately, so a
    three-document domain still has one of each.
    """
    wanted = [
        max(round(fraction * n_docs), cfg.min_heldout_docs) if fraction > 0 else 0
        for fraction in (cfg.validation_fraction, cfg.test_fraction)
    ]
    spare = max(n_docs - 1, 0)
    if sum(wanted) <= spare:
        return wanted[0], wanted[1]
    validation = min(wanted[0], max(spare - wanted[1], (spare + 1) // 2))
    return validation, min(wanted[1], spare - validation)


def assign_splits(ids: list[str], domains: list[str], cfg: PackConfig) -> list[str]:
    """The split of each document (aligned with the inputs, whose ids must be unique)."""
    domain_of = np.asarray(domains, dtype=object)
    keys = np.fromiter((doc_key(cfg.split_seed, i) for i in ids), dtype=np.uint64, count=len(ids))
    split = np.full(len(ids), SPLITS[0], dtype=object)
    for domain in sorted(set(domains)):
        members = np.flatnonzero(domain_of == domain)
        ranked = np.asarray(sorted(members, key=lambda i: (int(keys[i]), ids[i])), dtype=np.int64)
        n_validation, n_test = heldout_counts(len(members), cfg)
        split[ranked[:n_validation]] = SPLITS[1]
        split[ranked[n_validation : n_validation + n_test]] = SPLITS[2]
    return split.tolist()


def fit_splits(input_urls: list[str], cfg: PackConfig, artifact_dir: str) -> dict[str, str]:
    """Assign splits to the documents of the mixture's input; write ``splits.parquet`` (id, split) sorted by id.

    Rows sharing an id and domain are one document (copies in a mixture's output, for a standalone tokenize run).
    Returns ``{"splits": <parquet url>, "splits_summary": <json url>}``; the summary counts documents per domain
    and split.
    """
    parts = [storage.read_parquet(url, columns=["id", "domain"]) for url in input_urls]
    if not parts:
        raise ValueError("splits: no input shards to assign splits to")
    table = pa.concat_tables(parts).group_by(["id", "domain"]).aggregate([]).sort_by("id")
    ids = table.column("id").to_pylist()
    if len(set(ids)) != len(ids):
        raise ValueError("splits: a document id occurs with two domains; ids must be unique")
    domains = table.column("domain").to_pylist()
    splits = assign_splits(ids, domains, cfg)
    assigned = pa.table({"id": ids, "split": splits}, schema=SPLITS_SCHEMA)
    splits_url = storage.join(artifact_dir, SPLITS_FILE)
    summary_url = storage.join(artifact_dir, SPLITS_SUMMARY_FILE)
    storage.write_parquet(splits_url, assigned)
    storage.write_json(summary_url, _summary(domains, splits))
    return {"splits": splits_url, "splits_summary": summary_url}


def _summary(domains: list[str], splits: list[str]) -> dict[str, dict[str, int]]:
    summary: dict[str, dict[str, int]] = {}
    for domain, split in zip(domains, splits, strict=True):
        summary.setdefault(domain, dict.fromkeys(SPLITS, 0))[split] += 1
    return dict(sorted(summary.items()))


def settings_of(cfg: PipelineConfig) -> dict[str, Any]:
    return {"pack": cfg.pack.model_dump(mode="json", include=set(SPLIT_SETTINGS))}


def fit_shared(inputs: list[str], cfg: PipelineConfig, artifact_dir: str) -> dict[str, str]:
    return fit_splits(inputs, cfg.pack, artifact_dir)
