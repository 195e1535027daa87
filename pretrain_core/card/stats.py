"""The small per-shard statistics the data card is built from, gathered in each stage's map: counts under
`<family>/<value>` keys that the manifest sums over shards, so the card never rereads the corpus and its memory
stays that of a few hundred numbers at any corpus size."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import numpy as np

SCORE_BINS = 20  # quality_score histogram: equal bins over [0, 1]
QUALITY_SCORE = "score_hist"  # score_hist/<domain>/<bin index>
CLUSTER_SIZE = "cluster_size"  # cluster_size/<size bucket>: kept documents with that many copies found
TOKENS_BY_LICENCE = "tokens_by_licence"  # mixture: realised tokens per licence expression (copies counted)
TOKENS_BY_SOURCE = "tokens_by_source"  # tokenize: document tokens (copies counted) by source
TOKENS_BY_LANGUAGE = "tokens_by_lang"  # tokenize: the same by language
BYTES_BY_LANGUAGE = "bytes_by_lang"  # tokenize: UTF-8 bytes of those documents by language (bytes per token)


def counts(prefix: str, values: Iterable[str]) -> dict[str, float]:
    """`prefix/value` → how many times each value occurs."""
    return {f"{prefix}/{value}": float(n) for value, n in sorted(Counter(values).items())}


def score_histogram(scores: np.ndarray, domains: Iterable[str]) -> dict[str, float]:
    """Documents per domain and quality-score bin (bin i covers [i, i+1) / SCORE_BINS; a score of 1 in the last)."""
    bins = np.minimum((np.asarray(scores, dtype=np.float64) * SCORE_BINS).astype(np.int64), SCORE_BINS - 1)
    return counts(QUALITY_SCORE, (f"{domain}/{b:02d}" for domain, b in zip(domains, bins.tolist(), strict=True)))


def size_bucket(size: int) -> str:
    """1, 2, 3-4, 5-8, 9-16, ...: cluster sizes in powers of two."""
    if size <= 2:
        return str(size)
    upper = 1 << (size - 1).bit_length()
    return f"{upper // 2 + 1}-{upper}"


def cluster_sizes(sizes: Iterable[int]) -> dict[str, float]:
    return counts(CLUSTER_SIZE, (size_bucket(int(size)) for size in sizes))


def is_card_statistic(key: str) -> bool:
    return "/" in key


def family(stats: dict[str, float], prefix: str) -> dict[str, float]:
    """The `prefix/...` entries of (summed) stage stats, keyed by what follows the prefix."""
    start = len(prefix) + 1
    return {key[start:]: value for key, value in stats.items() if key.startswith(f"{prefix}/")}
