"""Assign every document to train / validation / test once, globally, before anything is packed.

Within each domain, documents are ranked by a seeded hash of their id and the first ones go to validation, the
next to test, so the assignment is independent of shard layout and no document (nor any copy of it) can land in
two splits. Counts are per domain with a floor (``min_heldout_docs``), so even a small domain is evaluated.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pretrain_core import storage
from pretrain_core.tokenize.config import PackConfig
from pretrain_core.tokenize.keys import doc_key

SPLITS = ("train", "validation", "test")
SPLITS_FILE = "splits.parquet"
SPLITS_SUMMARY_FILE = "splits.json"

SPLITS_SCHEMA = pa.schema([pa.field("id", pa.string(), nullable=False), pa.field("split", pa.string(), nullable=False)])


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
    """Assign splits to the documents of the mixture output; write ``splits.parquet`` (id, split) sorted by id.

    Returns ``{"splits": <parquet url>, "splits_summary": <json url>}``; the summary counts documents and tokens
    (first copies) per domain and split.
    """
    parts = [storage.read_parquet(url, columns=["id", "domain", "n_tokens", "repeat_index"]) for url in input_urls]
    if not parts:
        raise ValueError("tokenize: no input shards to assign splits to")
    table = pa.concat_tables(parts)
    table = table.filter(pc.equal(table.column("repeat_index"), 0)).sort_by("id")
    ids = table.column("id").to_pylist()
    if len(set(ids)) != len(ids):
        raise ValueError("tokenize: a document id occurs twice with repeat_index 0; ids must be unique")
    domains = table.column("domain").to_pylist()
    splits = assign_splits(ids, domains, cfg)
    assigned = pa.table({"id": ids, "split": splits}, schema=SPLITS_SCHEMA)
    splits_url = storage.join(artifact_dir, SPLITS_FILE)
    summary_url = storage.join(artifact_dir, SPLITS_SUMMARY_FILE)
    storage.write_parquet(splits_url, assigned)
    storage.write_json(summary_url, _summary(domains, splits, table.column("n_tokens").to_pylist()))
    return {"splits": splits_url, "splits_summary": summary_url}


def _summary(domains: list[str], splits: list[str], n_tokens: list[int]) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    for domain, split, tokens in zip(domains, splits, n_tokens, strict=True):
        cell = summary.setdefault(domain, {}).setdefault(split, {"documents": 0, "tokens": 0})
        cell["documents"] += 1
        cell["tokens"] += tokens
    return summary
