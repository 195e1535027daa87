"""Gopher's repeated-n-gram figures of one document (`prose_rules.top_ngram_chars`, `prose_rules.repeated_ngram_chars`,
read by the clean stage's rules and the quality stage's signals), for n = 1, 2, ... in turn.

An n-gram is the polynomial hash of n consecutive word ids, h = h * 1,000,003 + id (wrapping); occurrences are
grouped by a stable sort of the hashes, so ties resolve as `np.unique` resolved them (smallest hash first, then
earliest position). An n-gram that occurs once cannot start an (n + 1)-gram that occurs twice (the hashes extend
each other, a 64-bit collision aside), so each n sorts only the positions whose (n - 1)-gram repeats: in prose few
5-grams repeat, and the six repeated-n-gram sizes cost little more than one. A test compares both figures with the
numpy definitions over all positions.
"""

from __future__ import annotations

import numba
import numpy as np

_HASH_BASE = np.uint64(1_000_003)


@numba.njit(cache=True, nogil=True)
def level_figures(word_ids, word_lengths, positions, hashes, n):
    """Extend the candidates' (n - 1)-gram hashes by their n-th word and measure the n-grams: (top chars, repeated
    chars, the candidates for n + 1 (ascending positions whose n-gram occurs more than once), their hashes)."""
    size = word_ids.size
    room = positions + n <= size
    starts = positions[room]
    grams = hashes[room] * _HASH_BASE + word_ids[starts + n - 1]
    order = np.argsort(grams, kind="mergesort")
    repeats = np.zeros(starts.size, dtype=np.bool_)
    coverage = np.zeros(size + 1, dtype=np.int64)
    best_count, best_start = 1, -1
    run_start = 0
    for k in range(1, order.size + 1):
        if k < order.size and grams[order[k]] == grams[order[run_start]]:
            continue
        if k - run_start > 1:
            for member in range(run_start, k):
                repeats[order[member]] = True
            for member in range(run_start + 1, k):  # not the first (earliest) of its run: a repeat
                coverage[starts[order[member]]] += 1
                coverage[starts[order[member]] + n] -= 1
        if k - run_start > best_count:
            best_count, best_start = k - run_start, starts[order[run_start]]
        run_start = k
    top = 0
    if best_start >= 0:
        top = word_lengths[best_start : best_start + n].sum() * best_count
    repeated = 0
    depth = 0
    for i in range(size):
        depth += coverage[i]
        if depth > 0:
            repeated += word_lengths[i]
    return top, repeated, starts[repeats], grams[repeats]


class RepeatFigures:
    """Per n, (characters of the words of the most frequent n-gram times its count when it occurs more than once,
    characters of the words covered by any n-gram occurrence that is not the n-gram's first), worked out for
    1, 2, ... up to the largest n asked for."""

    def __init__(self, word_ids: np.ndarray, word_lengths: np.ndarray) -> None:
        self._word_ids = word_ids
        self._word_lengths = word_lengths
        self._positions = np.arange(word_ids.size, dtype=np.int64)
        self._hashes = np.zeros(word_ids.size, dtype=np.uint64)
        self._figures: list[tuple[int, int]] = []

    def at(self, n: int) -> tuple[int, int]:
        """(top chars, repeated chars) of the n-grams (n >= 1)."""
        if n < 1:
            raise ValueError(f"n-grams of {n} words")
        while len(self._figures) < n:
            top, repeated, self._positions, self._hashes = level_figures(
                self._word_ids, self._word_lengths, self._positions, self._hashes, len(self._figures) + 1
            )
            self._figures.append((int(top), int(repeated)))
        return self._figures[n - 1]
