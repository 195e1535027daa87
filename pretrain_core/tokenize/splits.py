"""Assign every document to train / validation / test once, globally, before the mixture makes any copy.

Within each domain, documents are ranked by a seeded hash of their id and the first ones go to validation, the
next to test, so the assignment is independent of shard layout and no document (nor any copy of it) can land in
two splits. Counts are per domain with a floor (``min_heldout_docs``), so even a small domain is evaluated.
Assigning before the mixture lets its plan count training documents only, so the weights hold in the train split.

The fit never holds the corpus's ids: it streams the shards twice (documents per domain; then the held-out
number of smallest (key, id) pairs per domain, a bounded set) and writes each domain's two boundaries. A document's
split is then a function of its id, domain and those boundaries (``SplitBoundaries.split_of``), which the mixture
and tokenize stages evaluate per shard.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from pretrain_core import storage
from pretrain_core.tokenize.config import PackConfig
from pretrain_core.tokenize.keys import doc_key

if TYPE_CHECKING:
    from pretrain_core.config import PipelineConfig

SPLITS = ("train", "validation", "test")
SPLITS_FILE = "splits.json"
SPLITS_SUMMARY_FILE = "splits_summary.json"
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


@dataclass(frozen=True)
class SplitBoundaries:
    """Per domain, the last (key, id) of validation and of test in rank order (None: that split is empty)."""

    seed: int
    last: dict[str, tuple[tuple[int, str] | None, tuple[int, str] | None]]

    def split_of(self, ids: Sequence[str], domains: Sequence[str]) -> np.ndarray:
        """The split of each document: validation up to its domain's first boundary, test up to the second."""
        split = np.full(len(ids), SPLITS[0], dtype=object)
        for row, (doc_id, domain) in enumerate(zip(ids, domains, strict=True)):
            validation, test = self.last.get(domain, (None, None))
            if validation is None and test is None:
                continue
            ranked = (doc_key(self.seed, doc_id), doc_id)
            if validation is not None and ranked <= validation:
                split[row] = SPLITS[1]
            elif test is not None and ranked <= test:
                split[row] = SPLITS[2]
        return split

    def to_json(self) -> dict[str, Any]:
        return {"seed": self.seed, "last": {d: [list(b) if b else None for b in pair] for d, pair in self.last.items()}}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SplitBoundaries:
        last = {d: tuple((int(b[0]), str(b[1])) if b else None for b in pair) for d, pair in data["last"].items()}
        return cls(int(data["seed"]), last)  # type: ignore[arg-type]


def load_boundaries(url: str) -> SplitBoundaries:
    return SplitBoundaries.from_json(storage.read_json(url))


def fit_splits(input_urls: list[str], cfg: PackConfig, artifact_dir: str) -> dict[str, str]:
    """Assign splits to the documents of the mixture's input as `assign_splits` would over all of them at once;
    write the boundaries (``splits.json``) and the documents per domain and split (``splits_summary.json``).

    Rows sharing an id and domain within a shard are one document (copies in a mixture's output, for a standalone
    tokenize run). Returns ``{"splits": <json url>, "splits_summary": <json url>}``.
    """
    if not input_urls:
        raise ValueError("splits: no input shards to assign splits to")
    counts: dict[str, int] = {}
    for _, domains in _documents(input_urls):
        for domain, n in Counter(domains).items():
            counts[domain] = counts.get(domain, 0) + n
    wanted = {domain: heldout_counts(n, cfg) for domain, n in counts.items()}
    smallest: dict[str, list[tuple[int, str]]] = {domain: [] for domain in counts}
    for ids, domains in _documents(input_urls):
        by_domain: dict[str, list[tuple[int, str]]] = {}
        for doc_id, domain in zip(ids, domains, strict=True):
            if sum(wanted[domain]):
                by_domain.setdefault(domain, []).append((doc_key(cfg.split_seed, doc_id), doc_id))
        for domain, ranked in by_domain.items():  # keep the held-out number of best-ranked documents seen so far
            smallest[domain] = heapq.nsmallest(sum(wanted[domain]), [*smallest[domain], *ranked])
    last: dict[str, tuple[tuple[int, str] | None, tuple[int, str] | None]] = {}
    summary: dict[str, dict[str, int]] = {}
    for domain in sorted(counts):
        (n_validation, n_test), ranked = wanted[domain], smallest[domain]
        last[domain] = (
            ranked[n_validation - 1] if n_validation else None,
            ranked[n_validation + n_test - 1] if n_test else None,
        )
        summary[domain] = {
            SPLITS[0]: counts[domain] - n_validation - n_test,
            SPLITS[1]: n_validation,
            SPLITS[2]: n_test,
        }
    splits_url = storage.join(artifact_dir, SPLITS_FILE)
    summary_url = storage.join(artifact_dir, SPLITS_SUMMARY_FILE)
    storage.write_json(splits_url, SplitBoundaries(cfg.split_seed, last).to_json())
    storage.write_json(summary_url, summary)
    return {"splits": splits_url, "splits_summary": summary_url}


def _documents(input_urls: list[str]) -> Iterator[tuple[list[str], list[str]]]:
    """(ids, domains) of each shard's distinct documents; an id with two domains is refused."""
    for url in input_urls:
        table = storage.read_parquet(url, columns=["id", "domain"]).group_by(["id", "domain"]).aggregate([])
        ids = table.column("id").to_pylist()
        if len(set(ids)) != len(ids):
            raise ValueError("splits: a document id occurs with two domains; ids must be unique")
        yield ids, table.column("domain").to_pylist()


def settings_of(cfg: PipelineConfig) -> dict[str, Any]:
    return {"pack": cfg.pack.model_dump(mode="json", include=set(SPLIT_SETTINGS))}


def fit_shared(inputs: list[str], cfg: PipelineConfig, artifact_dir: str) -> dict[str, str]:
    return fit_splits(inputs, cfg.pack, artifact_dir)
