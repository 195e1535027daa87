"""The plain implementations near-dedup's compiled kernels replaced (`pretrain_core/dedup/kernels.py`): regular
expressions for normalisation, numpy prefix sums and a lexsort for shingle sets, a (shingles x permutations) numpy
product for MinHash. The kernels must give exactly what these give (tests/dedup/test_kernels.py)."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Collection, Sequence

import numpy as np

from pretrain_core.dedup.config import Ignorable
from pretrain_core.dedup.kernels import UNSPACED_RANGES
from pretrain_core.dedup.minhash import permutations
from pretrain_core.dedup.shingles import ShingleKind, ShingleSets, _empty_sets

_WORD = re.compile(r"\w+")
_DIGITS = re.compile(r"\d+")
_MAX_HASH = np.uint32(0xFFFFFFFF)
_BATCH_CHARS = 1 << 20
_SEPARATOR = "\n"
_SPACE, _NEWLINE = 0x20, 0x0A
_BASE = 0x100000001B3
_BASE_INVERSE = pow(_BASE, -1, 1 << 64)
_LENGTH_SALT = np.uint64(0x9E3779B97F4A7C15)


def regex_normalize_text(text: str, ignore: Collection[Ignorable]) -> str:
    text = unicodedata.normalize("NFKC", text)
    if "case" in ignore:
        text = text.lower()
    if "digits" in ignore:
        text = _DIGITS.sub("0", text)
    words = _WORD.findall(text) if "punctuation" in ignore else text.split()
    return " ".join(words)


def numpy_shingle_sets(
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
    return ShingleSets.concat(parts) if parts else _empty_sets(0)


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
    for low, high in UNSPACED_RANGES:
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


def numpy_minhash_signatures(sets: ShingleSets, num_perm: int, seed: int) -> np.ndarray:
    """One ``num_perm``-wide uint32 signature per document; a document without shingles keeps all-ones."""
    a, b = permutations(num_perm, seed)

    def permuted(hashes: np.ndarray, _counts: np.ndarray) -> np.ndarray:
        mixed = fmix32((hashes & np.uint64(0xFFFFFFFF)).astype(np.uint32))
        values = np.multiply.outer(a, mixed)
        values += b[:, np.newaxis]
        return values

    return sets.reduce_per_doc(permuted, np.minimum, np.full(num_perm, _MAX_HASH, dtype=np.uint32))


def fmix32(values: np.ndarray) -> np.ndarray:
    """MurmurHash3's 32-bit finaliser, the pre-mix datasketch applies before permuting."""
    values = values ^ (values >> np.uint32(16))
    values = values * np.uint32(0x85EBCA6B)
    values = values ^ (values >> np.uint32(13))
    values = values * np.uint32(0xC2B2AE35)
    return values ^ (values >> np.uint32(16))
