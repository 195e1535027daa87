"""Near-dedup's per-character loops compiled to native code by numba: text normalisation, shingle hashing, per-document
unique sets and MinHash signatures, each a single pass over a batch's code points.

Each kernel computes exactly what its definition says, bit for bit: `normalize.normalize_text` (after NFKC and case
folding, which stay in Python's C code), the span hashes and sets of `shingles.shingle_sets`, and datasketch's
affine32 MinHash (`minhash.minhash_signatures`); the tests compare them with plain implementations. Integer constants
are typed (numba widens mixed signed/unsigned arithmetic to floats).
"""

from __future__ import annotations

import functools

import numba
import numpy as np

from pretrain_core.unicode_table import DECIMAL, SPACE, WORD, char_flags

_SPACE_POINT, _NEWLINE_POINT, _ZERO_POINT = np.uint32(0x20), np.uint32(0x0A), np.uint32(0x30)
_BASE = np.uint64(0x100000001B3)
_LENGTH_SALT = np.uint64(0x9E3779B97F4A7C15)
_MASK32 = np.uint64(0xFFFFFFFF)
UNSPACED_RANGES = np.array(
    [
        (0x0E00, 0x0EFF),
        (0x1000, 0x109F),
        (0x1780, 0x17FF),
        (0x3040, 0x30FF),
        (0x3400, 0x4DBF),
        (0x4E00, 0x9FFF),
        (0xF900, 0xFAFF),
        (0x20000, 0x3134F),
    ],
    dtype=np.uint32,
)  # Thai, Lao, Myanmar, Khmer, kana, CJK ideographs: scripts written without spaces between words


@functools.cache
def word_characters(by_word_characters: bool) -> np.ndarray:
    """Per code point, 1 if it belongs to a word: `\\w` characters, or (punctuation kept) anything but whitespace."""
    flags = char_flags()
    inside = (flags & WORD) != 0 if by_word_characters else (flags & SPACE) == 0
    return inside.astype(np.uint8)


@numba.njit(cache=True, nogil=True)
def compact_words(points, offsets, word, flags, zero_digits, out, out_offsets):
    """Write each document's words (`word[c]` is 1 for their characters) joined by single spaces into `out` (CSR
    `out_offsets`, one slot more than `points`); with `zero_digits` every run of `\\d` is first one 0.
    Stores are unconditional and counts advance by 0 or 1, so the common loop has no branch to mispredict."""
    written = 0
    for doc in range(offsets.size - 1):
        out_offsets[doc] = written
        in_word = np.uint8(0)
        seen = np.uint8(0)
        in_digits = False
        for i in range(offsets[doc], offsets[doc + 1]):
            point = points[i]
            if zero_digits:
                if flags[point] & DECIMAL:
                    if in_digits:
                        continue
                    in_digits = True
                    point = _ZERO_POINT
                else:
                    in_digits = False
            inside = word[point]
            out[written] = _SPACE_POINT
            written += inside & (in_word ^ np.uint8(1)) & seen
            out[written] = point
            written += inside
            in_word = inside
            seen |= inside
    out_offsets[offsets.size - 1] = written


@numba.njit(cache=True, nogil=True)
def char_mode(points, offsets, kind_code, min_share):
    """Which documents get character shingles: all (kind_code 2), none (1), or (0, auto) those whose non-space
    characters are at least `min_share` in unspaced scripts."""
    n_docs = offsets.size - 1
    out = np.zeros(n_docs, dtype=np.bool_)
    for doc in range(n_docs):
        if kind_code != 0:
            out[doc] = kind_code == 2
            continue
        letters = 0
        unspaced = 0
        for i in range(offsets[doc], offsets[doc + 1]):
            point = points[i]
            if (point == _SPACE_POINT) | (point == _NEWLINE_POINT):
                continue
            letters += 1
            if point < UNSPACED_RANGES[0, 0]:
                continue
            for r in range(UNSPACED_RANGES.shape[0]):
                if UNSPACED_RANGES[r, 0] <= point <= UNSPACED_RANGES[r, 1]:
                    unspaced += 1
                    break
        out[doc] = letters > 0 and unspaced >= min_share * max(letters, 1)
    return out


@numba.njit(cache=True, nogil=True)
def _fmix64(value):
    value ^= value >> np.uint64(33)
    value *= np.uint64(0xFF51AFD7ED558CCD)
    value ^= value >> np.uint64(33)
    value *= np.uint64(0xC4CEB9FE1A85EC53)
    return value ^ (value >> np.uint64(33))


@numba.njit(cache=True, nogil=True)
def shingle_hashes(points, offsets, by_char, word_k, char_k, base_inverse, hashes, counts, set_offsets):
    """Each document's sorted unique shingle hashes and their counts into `hashes`/`counts` (CSR `set_offsets`).

    A shingle is `word_k` consecutive words (separated by space or newline) or `char_k` consecutive characters;
    a document shorter than one shingle has one shingle of all it has. Its hash is the span's polynomial
    sum(c_j * BASE**(j - start)) mod 2**64 (`base_inverse` is BASE's inverse), salted with its length and mixed by
    MurmurHash3's finaliser."""
    longest = 0
    for doc in range(offsets.size - 1):
        longest = max(longest, offsets[doc + 1] - offsets[doc])
    powers = np.empty(longest + 1, dtype=np.uint64)
    inverse = np.empty(longest + 1, dtype=np.uint64)
    powers[0] = 1
    inverse[0] = 1
    for j in range(1, longest + 1):
        powers[j] = powers[j - 1] * _BASE
        inverse[j] = inverse[j - 1] * base_inverse
    prefix = np.empty(longest + 1, dtype=np.uint64)
    scratch = np.empty(longest + 1, dtype=np.uint64)
    buckets = np.empty(4 * longest + 5, dtype=np.int64)  # two arrays of up to 2 * (longest + 1) + 1 buckets
    word_starts = np.empty(longest + 2, dtype=np.int64)
    word_ends = np.empty(longest + 2, dtype=np.int64)
    written = 0
    for doc in range(offsets.size - 1):
        set_offsets[doc] = written
        start = offsets[doc]
        length = offsets[doc + 1] - start
        prefix[0] = 0
        for j in range(length):
            prefix[j + 1] = prefix[j] + np.uint64(points[start + j]) * powers[j]
        first = written
        if by_char[doc]:
            spans = max(length - char_k + 1, 1) if length > 0 else 0
            for s in range(spans):
                e = min(s + char_k, length)
                raw = (prefix[e] - prefix[s]) * inverse[s]
                hashes[written] = _fmix64(raw ^ (np.uint64(e - s) * _LENGTH_SALT))
                written += 1
        else:
            words = np.int64(0)
            inside = np.int64(0)
            spare = word_ends.size - 1  # takes the stores a separator makes (branch-free loop), never read
            for j in range(length):
                point = points[start + j]
                letter = np.int64((point != _SPACE_POINT) & (point != _NEWLINE_POINT))
                word_starts[words] = j
                words += letter & (inside ^ 1)
                word_ends[words - 1 if letter else spare] = j + 1
                inside = letter
            spans = max(words - word_k + 1, 1) if words > 0 else 0
            for w in range(spans):
                s = word_starts[w]
                e = word_ends[min(w + word_k - 1, words - 1)]
                raw = (prefix[e] - prefix[s]) * inverse[s]
                hashes[written] = _fmix64(raw ^ (np.uint64(e - s) * _LENGTH_SALT))
                written += 1
        if written == first:
            continue
        _bucket_sort(hashes[first:written], scratch, buckets)
        unique = first
        counts[unique] = 1
        for j in range(first + 1, written):
            if hashes[j] == hashes[unique]:
                counts[unique] += 1
            else:
                unique += 1
                hashes[unique] = hashes[j]
                counts[unique] = 1
        written = unique + 1
    set_offsets[offsets.size - 1] = written


@numba.njit(cache=True, nogil=True)
def _bucket_sort(values, scratch, buckets):
    """Sort uniformly spread 64-bit hashes in place in expected linear time: scatter them into about as many
    buckets as values by their top bits, then insertion-sort each bucket (about one value each)."""
    n = values.size
    bits = 1
    while (1 << bits) < n:
        bits += 1
    shift = np.uint64(64 - bits)
    size = 1 << bits
    bucket_starts = buckets[: size + 1]
    bucket_starts[:] = 0
    for value in values:
        bucket_starts[(value >> shift) + np.uint64(1)] += 1
    for i in range(size):
        bucket_starts[i + 1] += bucket_starts[i]
    cursor = buckets[size + 1 : 2 * size + 1]
    cursor[:] = bucket_starts[:size]
    for value in values:
        bucket = value >> shift
        scratch[cursor[bucket]] = value
        cursor[bucket] += 1
    for bucket in range(size):
        for i in range(bucket_starts[bucket] + 1, bucket_starts[bucket + 1]):
            value = scratch[i]
            j = i - 1
            while j >= bucket_starts[bucket] and scratch[j] > value:
                scratch[j + 1] = scratch[j]
                j -= 1
            scratch[j + 1] = value
    values[:] = scratch[:n]


@numba.njit(cache=True, nogil=True)
def minhash(hashes, set_offsets, a, b, out):
    """datasketch's affine32 MinHash of each document's set: min over its shingles of a * fmix32(low 32 bits) + b
    mod 2**32, per permutation; a document with no shingles keeps what `out` holds (all ones)."""
    width = a.size
    row = np.empty(width, dtype=np.uint32)
    for doc in range(set_offsets.size - 1):
        row[:] = out[doc]
        for j in range(set_offsets[doc], set_offsets[doc + 1]):
            mixed = hashes[j] & _MASK32
            mixed ^= mixed >> np.uint64(16)
            mixed = (mixed * np.uint64(0x85EBCA6B)) & _MASK32
            mixed ^= mixed >> np.uint64(13)
            mixed = (mixed * np.uint64(0xC2B2AE35)) & _MASK32
            mixed ^= mixed >> np.uint64(16)
            mixed32 = np.uint32(mixed)
            for p in range(width):  # 32-bit lanes: the products' low halves are all that is kept
                row[p] = min(row[p], np.uint32(a[p] * mixed32 + b[p]))
        out[doc] = row


@numba.njit(cache=True, nogil=True)
def utf8_encode(points, offsets, out, out_offsets):
    """Each text's UTF-8 into `out` (CSR `out_offsets`); surrogates take three bytes, as `surrogatepass` writes."""
    written = 0
    for doc in range(offsets.size - 1):
        out_offsets[doc] = written
        for i in range(offsets[doc], offsets[doc + 1]):
            point = points[i]
            if point < 0x80:
                out[written] = point
                written += 1
            elif point < 0x800:
                out[written] = 0xC0 | (point >> 6)
                out[written + 1] = 0x80 | (point & 0x3F)
                written += 2
            elif point < 0x10000:
                out[written] = 0xE0 | (point >> 12)
                out[written + 1] = 0x80 | ((point >> 6) & 0x3F)
                out[written + 2] = 0x80 | (point & 0x3F)
                written += 3
            else:
                out[written] = 0xF0 | (point >> 18)
                out[written + 1] = 0x80 | ((point >> 12) & 0x3F)
                out[written + 2] = 0x80 | ((point >> 6) & 0x3F)
                out[written + 3] = 0x80 | (point & 0x3F)
                written += 4
    out_offsets[offsets.size - 1] = written


@numba.njit(cache=True, nogil=True)
def gather(points, starts, stops, out, out_offsets):
    """Copy the spans `points[starts[i]:stops[i]]` one after another into `out` (`out_offsets` already laid out)."""
    for i in range(starts.size):
        out[out_offsets[i] : out_offsets[i + 1]] = points[starts[i] : stops[i]]
