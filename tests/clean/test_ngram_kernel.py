"""The compiled repeated-n-gram figures (`clean/ngram_kernel.py`) equal the numpy definitions over all positions, on
real prose and on random word sequences full of repeats and ties."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pretrain_core.clean import ngram_kernel
from pretrain_core.clean.prose_rules import ProseDoc

_HASH_BASE = np.uint64(1_000_003)


def _ngram_hashes(word_ids: np.ndarray, n: int) -> np.ndarray:
    count = word_ids.size - n + 1
    if count <= 0:
        return np.empty(0, dtype=np.uint64)
    hashes = np.zeros(count, dtype=np.uint64)
    for offset in range(n):
        hashes = hashes * _HASH_BASE + word_ids[offset : offset + count]
    return hashes


def numpy_top(word_ids: np.ndarray, word_lengths: np.ndarray, n: int) -> int:
    hashes = _ngram_hashes(word_ids, n)
    if hashes.size == 0:
        return 0
    _, first, counts = np.unique(hashes, return_index=True, return_counts=True)
    top = int(np.argmax(counts))
    if counts[top] < 2:
        return 0
    start = int(first[top])
    return int(word_lengths[start : start + n].sum()) * int(counts[top])


def numpy_repeated(word_ids: np.ndarray, word_lengths: np.ndarray, n: int) -> int:
    hashes = _ngram_hashes(word_ids, n)
    if hashes.size == 0:
        return 0
    _, first, inverse = np.unique(hashes, return_index=True, return_inverse=True)
    repeat_starts = np.flatnonzero(first[inverse] != np.arange(hashes.size))
    if repeat_starts.size == 0:
        return 0
    coverage = np.zeros(word_ids.size + 1, dtype=np.int64)
    np.add.at(coverage, repeat_starts, 1)
    np.add.at(coverage, repeat_starts + n, -1)
    covered = np.cumsum(coverage[:-1]) > 0
    return int(word_lengths[covered].sum())


def _same(word_ids: np.ndarray, word_lengths: np.ndarray) -> None:
    """Asked in the order the rules ask (top 2-4, then repeated 5-10), and then for the rest, all from one object."""
    figures = ngram_kernel.RepeatFigures(word_ids, word_lengths)
    for n in (2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 12, 20):
        top, repeated = figures.at(n)
        assert top == numpy_top(word_ids, word_lengths, n), n
        assert repeated == numpy_repeated(word_ids, word_lengths, n), n


def test_real_prose(licence: Callable[[str], str], udhr: dict[str, str]) -> None:
    for text in (licence("GPL-3"), licence("BSD"), " ".join(udhr.values()), "one two one two one two three", ""):
        doc = ProseDoc(text)
        _same(doc.word_ids, doc.word_lengths)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 4), max_size=60), st.integers(0, 2**32))
def test_random_word_sequences(ids: list[int], seed: int) -> None:
    lengths = np.random.default_rng(seed).integers(1, 12, len(ids))
    _same(np.array(ids, dtype=np.uint64), lengths.astype(np.int64))
