"""Shingle sets of many documents at once, hashed by a compiled kernel with no per-shingle Python work.

A shingle is a span of normalised text: ``k`` consecutive words, or ``k`` consecutive characters for documents
written mostly in scripts without spaces between words (CJK, Thai, ...), decided per document. Its hash is the
span's polynomial sum(c_j * BASE**(j - start)) mod 2**64, salted with its length and finished with the MurmurHash3
64-bit mix (`kernels.shingle_hashes`), so a shingle hashes the same wherever it occurs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from pretrain_core.dedup import kernels
from pretrain_core.dedup.normalize import CodePoints

ShingleKind = Literal["auto", "word", "char"]

_BATCH_CHARS = 1 << 20  # code points shingled per kernel call: bounds memory at roughly 16 bytes per character
_REDUCE_CHUNK = 1 << 14  # shingles per chunk when reducing per-shingle values to per-document rows
_BASE = 0x100000001B3  # odd, so invertible modulo 2**64: spans hash independently of where they start
_BASE_INVERSE = np.uint64(pow(_BASE, -1, 1 << 64))
_KIND_CODES = {"auto": 0, "word": 1, "char": 2}


@dataclass(frozen=True)
class ShingleSets:
    """Per-document sets of 64-bit shingle hashes in CSR layout.

    Document ``i`` owns ``hashes[offsets[i]:offsets[i + 1]]``, sorted and unique; ``counts`` holds how often each
    shingle occurred in its document (the SimHash weights).
    """

    hashes: np.ndarray
    counts: np.ndarray
    offsets: np.ndarray

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.offsets)

    def of(self, doc: int) -> np.ndarray:
        return self.hashes[self.offsets[doc] : self.offsets[doc + 1]]

    def overlap(self, doc: int, other: int) -> tuple[int, int]:
        """Shingles the two documents share, and the size of the union of their sets."""
        mine, theirs = self.of(doc), self.of(other)
        shared = np.intersect1d(mine, theirs, assume_unique=True).size
        return shared, mine.size + theirs.size - shared

    def jaccard(self, doc: int, others: np.ndarray) -> np.ndarray:
        """Exact Jaccard similarity of one document's shingle set with each of ``others``."""
        rows = np.asarray(others, dtype=np.int64)
        mine = np.full(rows.size, doc, dtype=np.int64)
        return kernels.pair_jaccard(self.hashes, self.offsets, self.hashes, self.offsets, mine, rows)

    def reduce_per_doc(
        self, columns_of: Callable[[np.ndarray, np.ndarray], np.ndarray], ufunc: np.ufunc, initial: np.ndarray
    ) -> np.ndarray:
        """Reduce a column per shingle, ``columns_of(hashes, counts)`` of shape (width, shingles), to a row per
        document with ``ufunc``; returns (documents, width).

        Works chunk by chunk so the per-shingle values (e.g. permutations × shingles) never exist all at once, and
        keeps shingles on the last axis, where numpy's reductions run contiguously (about 10x faster than rows).
        Documents without shingles keep ``initial``.
        """
        out = np.repeat(initial[np.newaxis, :], len(self), axis=0)
        doc_of = np.repeat(np.arange(len(self), dtype=np.int64), self.sizes)
        for start in range(0, self.hashes.size, _REDUCE_CHUNK):
            stop = start + _REDUCE_CHUNK
            docs = doc_of[start:stop]
            columns = columns_of(self.hashes[start:stop], self.counts[start:stop])
            firsts = np.flatnonzero(np.concatenate(([True], docs[1:] != docs[:-1])))
            segment_docs = docs[firsts]
            out[segment_docs] = ufunc(out[segment_docs], ufunc.reduceat(columns, firsts, axis=1).T)
        return out

    @staticmethod
    def concat(parts: Sequence[ShingleSets]) -> ShingleSets:
        if not parts:
            return _empty_sets(0)
        shifts = np.cumsum([0] + [int(p.offsets[-1]) for p in parts[:-1]])
        return ShingleSets(
            hashes=np.concatenate([p.hashes for p in parts]),
            counts=np.concatenate([p.counts for p in parts]),
            offsets=np.concatenate([[0]] + [p.offsets[1:] + shift for p, shift in zip(parts, shifts, strict=True)]),
        )


def shingle_sets(
    texts: CodePoints, kind: ShingleKind, word_ngram: int, char_ngram: int, min_unspaced_share: float
) -> ShingleSets:
    """Shingle sets of normalised texts (see ``normalize_texts``), in batches of bounded size.

    A document shorter than one shingle gets a single shingle of all it has, so short texts still match.
    """
    parts: list[ShingleSets] = []
    first = 0
    while first < len(texts):
        last = int(np.searchsorted(texts.offsets, texts.offsets[first] + _BATCH_CHARS, side="right")) - 1
        last = min(max(last, first + 1), len(texts))
        offsets = texts.offsets[first : last + 1]
        room = int(offsets[-1] - offsets[0]) + len(offsets)
        hashes, counts = np.empty(room, dtype=np.uint64), np.empty(room, dtype=np.int64)
        set_offsets = np.empty(len(offsets), dtype=np.int64)
        kernels.shingle_hashes(
            texts.points, offsets, _KIND_CODES[kind], min_unspaced_share, kernels.unspaced_characters(),
            word_ngram, char_ngram, _BASE_INVERSE, hashes, counts, set_offsets,
        )  # fmt: skip
        parts.append(ShingleSets(hashes[: set_offsets[-1]].copy(), counts[: set_offsets[-1]].copy(), set_offsets))
        first = last
    return ShingleSets.concat(parts) if parts else _empty_sets(0)


def char_shingled(texts: CodePoints, kind: ShingleKind, min_unspaced_share: float) -> np.ndarray:
    """Which of the normalised texts ``shingle_sets`` cuts into character rather than word shingles."""
    return kernels.char_mode(
        texts.points, texts.offsets, _KIND_CODES[kind], min_unspaced_share, kernels.unspaced_characters()
    )


def _empty_sets(n_docs: int) -> ShingleSets:
    return ShingleSets(np.empty(0, np.uint64), np.empty(0, np.int64), np.zeros(n_docs + 1, dtype=np.int64))
