"""Gopher's repeated-n-gram figures of one document in a compiled pass (`prose_rules.top_ngram_chars`,
`prose_rules.repeated_ngram_chars`, read by the clean stage's rules and the quality stage's signals).

An n-gram is the polynomial hash of n consecutive word ids, h = h * 1,000,003 + id (wrapping); occurrences are
grouped by a stable sort of the hashes, so ties resolve as `np.unique` resolved them (smallest hash first, then
earliest position). A test compares both figures with the numpy definitions.
"""

from __future__ import annotations

import numba
import numpy as np

_HASH_BASE = np.uint64(1_000_003)


@numba.njit(cache=True, nogil=True)
def _grouped(word_ids, n):
    count = word_ids.size - n + 1
    hashes = np.zeros(count, dtype=np.uint64)
    for offset in range(n):
        for i in range(count):
            hashes[i] = hashes[i] * _HASH_BASE + word_ids[offset + i]
    return hashes, np.argsort(hashes, kind="mergesort")


@numba.njit(cache=True, nogil=True)
def top_ngram_chars(word_ids, word_lengths, n):
    """Characters of the words of the most frequent n-gram times its count, when it occurs more than once."""
    if word_ids.size - n + 1 <= 0:
        return 0
    hashes, order = _grouped(word_ids, n)
    best_count, best_start = 1, -1
    run_start = 0
    for k in range(1, order.size + 1):
        if k < order.size and hashes[order[k]] == hashes[order[run_start]]:
            continue
        if k - run_start > best_count:
            best_count, best_start = k - run_start, order[run_start]
        run_start = k
    if best_start < 0:
        return 0
    return word_lengths[best_start : best_start + n].sum() * best_count


@numba.njit(cache=True, nogil=True)
def repeated_ngram_chars(word_ids, word_lengths, n):
    """Characters of the words covered by any n-gram occurrence that is not the n-gram's first."""
    if word_ids.size - n + 1 <= 0:
        return 0
    hashes, order = _grouped(word_ids, n)
    coverage = np.zeros(word_ids.size + 1, dtype=np.int64)
    for k in range(1, order.size):
        if hashes[order[k]] == hashes[order[k - 1]]:  # not the first of its run: a repeat
            coverage[order[k]] += 1
            coverage[order[k] + n] -= 1
    total = 0
    depth = 0
    for i in range(word_ids.size):
        depth += coverage[i]
        if depth > 0:
            total += word_lengths[i]
    return total
