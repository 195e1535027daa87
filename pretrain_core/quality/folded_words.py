"""Case-folded words of a document as 64-bit digests, for the signals that count distinct words and listed words
(function words, lorem ipsum) without a Python string per word.

A word's folded form is `word.lower().strip(FOLD_PUNCTUATION)`. Lower-casing the whole text once gives every word's
lower-case form at the word's own offsets whenever no character lower-cases to more than one ("İ") and the text
holds no capital sigma (the only character `str.lower` treats by its neighbours, which may lie across a word's
edge); otherwise `folded_digests` answers None and the caller folds word by word. Digests are FNV-1a over code
points, as the token scan's word hashes are; two different words share one with probability 2**-64.
"""

from __future__ import annotations

import functools

import numba
import numpy as np

from pretrain_core.clean.prose_rules import FOLD_PUNCTUATION
from pretrain_core.clean.token_kernel import hash_span
from pretrain_core.unicode_table import code_points

CAPITAL_SIGMA = "\u03a3"


@numba.njit(cache=True, nogil=True)
def word_digests(points, starts, stops, edge):
    """Per word, the digest of its characters and of them without leading and trailing `edge` characters."""
    whole = np.empty(starts.size, dtype=np.uint64)
    stripped = np.empty(starts.size, dtype=np.uint64)
    for word in range(starts.size):
        start, stop = starts[word], stops[word]
        whole[word] = hash_span(points, start, stop)
        while start < stop and edge[points[start]]:
            start += 1
        while stop > start and edge[points[stop - 1]]:
            stop -= 1
        stripped[word] = hash_span(points, start, stop)
    return whole, stripped


@numba.njit(cache=True, nogil=True)
def _string_digest(points):
    return hash_span(points, 0, points.size)


@functools.cache
def edge_table() -> np.ndarray:
    table = np.zeros(0x110000, dtype=np.bool_)
    table[[ord(char) for char in FOLD_PUNCTUATION]] = True
    return table


def folded_digests(text: str, starts: np.ndarray, stops: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Digests of the words at (starts, stops) lower-cased, and lower-cased with edge punctuation stripped (the
    folded form); None where lower-casing the whole text would not give each word's own lower-case form."""
    lowered = text.lower()
    if not folds_in_place(text, lowered):
        return None
    whole, stripped = word_digests(code_points(lowered), starts, stops, edge_table())
    return whole, stripped


def folds_in_place(text: str, lowered: str) -> bool:
    """Whether ``lowered`` (the text lower-cased) holds each word's own lower-case form at the word's offsets."""
    return len(lowered) == len(text) and CAPITAL_SIGMA not in text


@functools.cache
def listed_digests(words: frozenset[str]) -> np.ndarray:
    """The sorted digests of a word list's words as written (they are folded forms already)."""
    return np.unique(np.array([_string_digest(code_points(word)) for word in words], dtype=np.uint64))


def count_listed(digests: np.ndarray, words: frozenset[str]) -> int:
    """How many of the digests are those of a listed word."""
    listed = listed_digests(words)
    if not listed.size:
        return 0
    found = listed[np.minimum(np.searchsorted(listed, digests), listed.size - 1)]
    return int(np.count_nonzero(found == digests))
