"""Shingle sets of many documents at once, hashed in numpy with no per-shingle Python work.

A shingle is a span of normalised text: ``k`` consecutive words, or ``k`` consecutive characters for documents
written mostly in scripts without spaces between words (CJK, Thai, ...), decided per document. A batch of
documents is joined into one code-point array; a polynomial prefix sum then hashes any span in O(1), so every
shingle of the batch is hashed by a handful of vectorised operations, finished with the MurmurHash3 64-bit mix.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

ShingleKind = Literal["auto", "word", "char"]

_BATCH_CHARS = 1 << 20  # code points hashed per numpy pass: bounds memory at roughly 40 bytes per character
_REDUCE_CHUNK = 1 << 14  # shingles per chunk when reducing per-shingle values to per-document rows
_SEPARATOR = "\n"  # never inside normalised text, whose whitespace is collapsed to single spaces
_SPACE, _NEWLINE = 0x20, 0x0A
_BASE = 0x100000001B3  # odd, so invertible modulo 2**64: spans hash independently of where they start
_BASE_INVERSE = pow(_BASE, -1, 1 << 64)
_LENGTH_SALT = np.uint64(0x9E3779B97F4A7C15)

# Scripts written without spaces between words: Thai, Lao, Myanmar, Khmer, kana, CJK ideographs.
_UNSPACED_RANGES = (
    (0x0E00, 0x0EFF),
    (0x1000, 0x109F),
    (0x1780, 0x17FF),
    (0x3040, 0x30FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xF900, 0xFAFF),
    (0x20000, 0x3134F),
)


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
        out = np.empty(len(others), dtype=np.float64)
        for k, other in enumerate(others.tolist()):
            shared, union = self.overlap(doc, other)
            out[k] = shared / union if union else 0.0
        return out

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
    normalized: Sequence[str], kind: ShingleKind, word_ngram: int, char_ngram: int, min_unspaced_share: float
) -> ShingleSets:
    """Shingle sets of normalised texts (see ``normalize_text``), in batches of bounded size.

    A document shorter than one shingle gets a single shingle of all it has, so short texts still match.
    """
    parts: list[ShingleSets] = []
    batch: list[str] = []
    batch_chars = 0
    for text in normalized:
        if batch and batch_chars + len(text) > _BATCH_CHARS:
            parts.append(_batch_sets(batch, kind, word_ngram, char_ngram, min_unspaced_share))
            batch, batch_chars = [], 0
        batch.append(text)
        batch_chars += len(text) + 1
    if batch:
        parts.append(_batch_sets(batch, kind, word_ngram, char_ngram, min_unspaced_share))
    return ShingleSets.concat(parts)


def char_shingled(normalized: Sequence[str], kind: ShingleKind, min_unspaced_share: float) -> np.ndarray:
    """Which of the normalised texts ``shingle_sets`` cuts into character rather than word shingles."""
    points, _, doc_of_char = _code_points(normalized)
    return _char_mode(points, doc_of_char, len(normalized), kind, min_unspaced_share)


def fmix64(values: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finaliser: an avalanching bijection, so every output bit depends on every input bit."""
    values = values ^ (values >> np.uint64(33))
    values = values * np.uint64(0xFF51AFD7ED558CCD)
    values = values ^ (values >> np.uint64(33))
    values = values * np.uint64(0xC4CEB9FE1A85EC53)
    return values ^ (values >> np.uint64(33))


def _batch_sets(
    texts: list[str], kind: ShingleKind, word_ngram: int, char_ngram: int, min_unspaced_share: float
) -> ShingleSets:
    points, lengths, doc_of_char = _code_points(texts)
    starts = np.concatenate(([0], np.cumsum(lengths + 1)[:-1])).astype(np.int64)
    by_char = _char_mode(points, doc_of_char, len(texts), kind, min_unspaced_share)
    word_docs, word_starts, word_ends = _word_spans(points, doc_of_char, ~by_char, word_ngram)
    char_docs, char_starts, char_ends = _char_spans(starts, np.where(by_char, lengths, 0), char_ngram)
    docs = np.concatenate((word_docs, char_docs))
    hashes = _span_hashes(points, np.concatenate((word_starts, char_starts)), np.concatenate((word_ends, char_ends)))
    return _unique_per_doc(docs, hashes, len(texts))


def _code_points(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The texts joined by separators as code points, each text's length, and the text each code point is in."""
    joined = _SEPARATOR.join(texts).encode("utf-32-le", errors="surrogatepass")
    points = np.frombuffer(joined, dtype=np.uint32).astype(np.uint64)
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    doc_of_char = np.repeat(np.arange(len(texts), dtype=np.int64), lengths + 1)[: points.size]
    return points, lengths, doc_of_char


def _char_mode(
    points: np.ndarray, doc_of_char: np.ndarray, n_docs: int, kind: ShingleKind, min_share: float
) -> np.ndarray:
    """Which documents get character shingles: all, none, or (auto) those mostly in unspaced scripts."""
    if kind != "auto":
        return np.full(n_docs, kind == "char")
    unspaced = np.zeros(points.size, dtype=bool)
    for low, high in _UNSPACED_RANGES:
        unspaced |= (points >= low) & (points <= high)
    letters = (points != _SPACE) & (points != _NEWLINE)
    unspaced_count = np.bincount(doc_of_char[unspaced], minlength=n_docs)
    letter_count = np.bincount(doc_of_char[letters], minlength=n_docs)
    return (letter_count > 0) & (unspaced_count >= min_share * np.maximum(letter_count, 1))


def _word_spans(
    points: np.ndarray, doc_of_char: np.ndarray, selected: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Character spans of every run of ``k`` consecutive words in the selected documents."""
    separator = (points == _SPACE) | (points == _NEWLINE)
    inside = ~separator
    word_starts = np.flatnonzero(inside & np.concatenate(([True], separator[:-1])))
    word_ends = np.flatnonzero(inside & np.concatenate((separator[1:], [True]))) + 1
    word_docs = doc_of_char[word_starts]
    keep = selected[word_docs]
    word_starts, word_ends, word_docs = word_starts[keep], word_ends[keep], word_docs[keep]
    words_per_doc = np.bincount(word_docs, minlength=selected.size)
    first_word = np.concatenate(([0], np.cumsum(words_per_doc)[:-1]))
    shingles_per_doc = np.where(words_per_doc > 0, np.maximum(words_per_doc - k + 1, 1), 0)
    firsts = _ranges(first_word, shingles_per_doc)
    lasts = np.minimum(firsts + k - 1, np.repeat(first_word + words_per_doc - 1, shingles_per_doc))
    docs = np.repeat(np.arange(selected.size, dtype=np.int64), shingles_per_doc)
    return docs, word_starts[firsts], word_ends[lasts]


def _char_spans(starts: np.ndarray, lengths: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Character spans of every ``k`` consecutive characters of documents with a non-zero length."""
    shingles_per_doc = np.where(lengths > 0, np.maximum(lengths - k + 1, 1), 0)
    span_starts = _ranges(starts, shingles_per_doc)
    span_ends = np.minimum(span_starts + k, np.repeat(starts + lengths, shingles_per_doc))
    return np.repeat(np.arange(lengths.size, dtype=np.int64), shingles_per_doc), span_starts, span_ends


def _ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(start, start + count)`` for every pair, without a Python loop."""
    total = int(counts.sum())
    offsets = np.cumsum(counts) - counts
    return np.repeat(starts - offsets, counts) + np.arange(total, dtype=np.int64)


def _span_hashes(points: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """64-bit hash of each span ``points[start:end]``: sum of ``c_j * BASE**(j - start)`` mod 2**64, then mixed."""
    if starts.size == 0:
        return np.empty(0, dtype=np.uint64)
    powers = _powers(_BASE, points.size)
    inverse_powers = _powers(_BASE_INVERSE, points.size)
    prefix = np.zeros(points.size + 1, dtype=np.uint64)
    np.cumsum(points * powers, out=prefix[1:])
    raw = (prefix[ends] - prefix[starts]) * inverse_powers[starts]
    return fmix64(raw ^ ((ends - starts).astype(np.uint64) * _LENGTH_SALT))


def _powers(base: int, count: int) -> np.ndarray:
    """``base ** j`` modulo 2**64 for j in [0, count), from a table computed once for batch-sized inputs."""
    return _power_table(base)[:count] if count <= _BATCH_CHARS else _compute_powers(base, count)


@functools.cache
def _power_table(base: int) -> np.ndarray:
    return _compute_powers(base, _BATCH_CHARS)


def _compute_powers(base: int, count: int) -> np.ndarray:
    """uint64 arithmetic wraps, which is exactly the modulus we want."""
    out = np.full(count, base, dtype=np.uint64)
    out[0] = 1
    return np.cumprod(out, out=out)


def _unique_per_doc(docs: np.ndarray, hashes: np.ndarray, n_docs: int) -> ShingleSets:
    if hashes.size == 0:
        return _empty_sets(n_docs)
    order = np.lexsort((hashes, docs))
    docs, hashes = docs[order], hashes[order]
    firsts = np.flatnonzero(np.concatenate(([True], (docs[1:] != docs[:-1]) | (hashes[1:] != hashes[:-1]))))
    counts = np.diff(np.append(firsts, hashes.size)).astype(np.int64)
    per_doc = np.bincount(docs[firsts], minlength=n_docs)
    return ShingleSets(hashes[firsts], counts, np.concatenate(([0], np.cumsum(per_doc))).astype(np.int64))


def _empty_sets(n_docs: int) -> ShingleSets:
    return ShingleSets(np.empty(0, np.uint64), np.empty(0, np.int64), np.zeros(n_docs + 1, dtype=np.int64))
