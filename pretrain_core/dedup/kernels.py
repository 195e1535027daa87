"""Near-dedup's per-character loops compiled to native code by numba: text normalisation, shingle hashing, per-document
unique sets and MinHash signatures, each a single pass over a batch's code points (or UTF-8 bytes).

Each kernel computes exactly what its definition says, bit for bit: `normalize.normalize_text` (NFKC and case
folding by table where a character folds alone, else in Python's C code), the span hashes and sets of
`shingles.shingle_sets`, and datasketch's affine32 MinHash (`minhash.minhash_signatures`); the tests compare them
with plain implementations. Integer constants are typed (numba widens mixed signed/unsigned arithmetic to floats).
"""

from __future__ import annotations

import functools

import numba
import numpy as np

from pretrain_core.unicode_table import DECIMAL, FOLD_CONTEXTUAL, FOLD_EXPANDS, SPACE, WORD, char_flags

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


@numba.njit(inline="always")
def _emit(point, out, written, in_word, seen, in_digits, word, flags, zero_digits):
    """One character through `compact_words`; returns its state (written, in_word, seen, in_digits).
    Stores are unconditional and counts advance by 0 or 1, so the common path has no branch to mispredict."""
    if zero_digits:
        if flags[point] & DECIMAL:
            if in_digits:
                return written, in_word, seen, in_digits
            in_digits = True
            point = _ZERO_POINT
        else:
            in_digits = False
    inside = word[point]
    out[written] = _SPACE_POINT
    written += inside & (in_word ^ np.uint8(1)) & seen
    out[written] = point
    written += inside
    return written, inside, seen | inside, in_digits


@numba.njit(cache=True, nogil=True)
def compact_words(points, offsets, word, flags, zero_digits, out, out_offsets):
    """Write each document's words (`word[c]` is 1 for their characters) joined by single spaces into `out` (CSR
    `out_offsets`, one slot more than `points`); with `zero_digits` every run of `\\d` is first one 0."""
    written = 0
    for doc in range(offsets.size - 1):
        out_offsets[doc] = written
        in_word, seen, in_digits = np.uint8(0), np.uint8(0), False
        for i in range(offsets[doc], offsets[doc + 1]):
            written, in_word, seen, in_digits = _emit(
                points[i], out, written, in_word, seen, in_digits, word, flags, zero_digits
            )
    out_offsets[offsets.size - 1] = written


@numba.njit(cache=True, nogil=True)
def fold_words(data, offsets, fold, expansions, expansion_offsets, word, flags, zero_digits, out, out_offsets, rest):
    """UTF-8 texts (`data[offsets[i]:offsets[i + 1]]`) folded by the table `fold` (`unicode_table.fold_table`) and
    compacted as `compact_words` does, in one pass, into `out` (CSR `out_offsets`; at least one slot more than the
    bytes). A text with a character the table leaves to its context, or whose expansions would write more characters
    than it has bytes, is left empty and flagged in `rest`."""
    if zero_digits:  # a constant inside the loop (about 6x faster than testing it per character)
        _fold_words(data, offsets, fold, expansions, expansion_offsets, word, flags, True, out, out_offsets, rest)
    else:
        _fold_words(data, offsets, fold, expansions, expansion_offsets, word, flags, False, out, out_offsets, rest)


@numba.njit(inline="always")
def _fold_words(data, offsets, fold, expansions, expansion_offsets, word, flags, zero_digits, out, out_offsets, rest):
    written = 0
    base = offsets[0]
    for doc in range(offsets.size - 1):
        out_offsets[doc] = written
        first = written
        in_word, seen, in_digits = np.uint8(0), np.uint8(0), False
        i = offsets[doc]
        end = offsets[doc + 1]
        while i < end:
            byte = np.uint32(data[i])
            width = 1 if byte < 0x80 else 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            if (byte & 0xC0) == 0x80 or byte >= 0xF8 or i + width > end:
                rest[doc] = True  # not UTF-8 (Arrow strings are, unless built unchecked): left to Python's decoder
                written = first
                break
            if byte < 0x80:
                point = byte
                i += 1
            elif byte < 0xE0:
                point = ((byte & 0x1F) << 6) | (np.uint32(data[i + 1]) & 0x3F)
                i += 2
            elif byte < 0xF0:
                point = ((byte & 0x0F) << 12) | ((np.uint32(data[i + 1]) & 0x3F) << 6) | (np.uint32(data[i + 2]) & 0x3F)
                i += 3
            else:
                point = (
                    ((byte & 0x07) << 18)
                    | ((np.uint32(data[i + 1]) & 0x3F) << 12)
                    | ((np.uint32(data[i + 2]) & 0x3F) << 6)
                    | (np.uint32(data[i + 3]) & 0x3F)
                )
                i += 4
                if point > 0x10FFFF:
                    rest[doc] = True
                    written = first
                    break
            folded = fold[point]
            if folded < FOLD_EXPANDS:
                written, in_word, seen, in_digits = _emit(
                    folded, out, written, in_word, seen, in_digits, word, flags, zero_digits
                )
                continue
            k = folded ^ FOLD_EXPANDS
            if folded != FOLD_CONTEXTUAL and written + expansion_offsets[k + 1] - expansion_offsets[k] < out.size:
                for j in range(expansion_offsets[k], expansion_offsets[k + 1]):
                    written, in_word, seen, in_digits = _emit(
                        expansions[j], out, written, in_word, seen, in_digits, word, flags, zero_digits
                    )
                if written <= i - base:  # never ahead of the bytes read: the next stores stay inside `out`
                    continue
            rest[doc] = True
            written = first
            break
    out_offsets[offsets.size - 1] = written


@functools.cache
def unspaced_characters() -> np.ndarray:
    """Per code point, 1 if it belongs to a script in `UNSPACED_RANGES`."""
    table = np.zeros(0x110000, dtype=np.uint8)
    for low, high in UNSPACED_RANGES:
        table[low : high + 1] = 1
    return table


@numba.njit(cache=True, nogil=True)
def char_mode(points, offsets, kind_code, min_share, unspaced):
    """Which documents get character shingles (`_by_char`; `unspaced[c]` is 1 for characters of unspaced scripts)."""
    n_docs = offsets.size - 1
    out = np.zeros(n_docs, dtype=np.bool_)
    for doc in range(n_docs):
        letters = 0
        unspaced_count = 0
        for i in range(offsets[doc], offsets[doc + 1]):
            point = points[i]
            letters += (point != _SPACE_POINT) & (point != _NEWLINE_POINT)
            unspaced_count += unspaced[point]
        out[doc] = _by_char(kind_code, letters, unspaced_count, min_share)
    return out


@numba.njit(inline="always")
def _by_char(kind_code, letters, unspaced_count, min_share):
    """Character shingles for all documents (kind_code 2), none (1), or (0, auto) those whose non-space characters
    are at least `min_share` in unspaced scripts."""
    if kind_code != 0:
        return kind_code == 2
    return letters > 0 and unspaced_count >= min_share * max(letters, 1)


@numba.njit(cache=True, nogil=True)
def _fmix64(value):
    value ^= value >> np.uint64(33)
    value *= np.uint64(0xFF51AFD7ED558CCD)
    value ^= value >> np.uint64(33)
    value *= np.uint64(0xC4CEB9FE1A85EC53)
    return value ^ (value >> np.uint64(33))


@numba.njit(cache=True, nogil=True)
def shingle_hashes(
    points, offsets, kind_code, min_share, unspaced, word_k, char_k, base_inverse, hashes, counts, set_offsets
):
    """Each document's sorted unique shingle hashes and their counts into `hashes`/`counts` (CSR `set_offsets`).

    A shingle is `word_k` consecutive words (separated by space or newline) or, for the documents `char_mode` picks,
    `char_k` consecutive characters; a document shorter than one shingle has one shingle of all it has. Its hash is
    the span's polynomial sum(c_j * BASE**(j - start)) mod 2**64 (`base_inverse` is BASE's inverse), salted with its
    length and mixed by MurmurHash3's finaliser. One pass per document finds prefix sums, word bounds and the mode."""
    longest = 0
    for doc in range(offsets.size - 1):
        longest = max(longest, offsets[doc + 1] - offsets[doc])
    inverse = np.empty(longest + 1, dtype=np.uint64)
    inverse[0] = 1
    for j in range(1, longest + 1):
        inverse[j] = inverse[j - 1] * base_inverse
    prefix = np.empty(longest + 1, dtype=np.uint64)
    scratch = np.empty(longest + 1, dtype=np.uint64)
    buckets = np.empty(4 * longest + 5, dtype=np.int64)  # two arrays of up to 2 * (longest + 1) + 1 buckets
    word_starts = np.empty(longest + 2, dtype=np.int64)
    word_ends = np.empty(longest + 2, dtype=np.int64)
    spare = word_ends.size - 1  # takes the stores a separator makes (branch-free loop), never read
    written = 0
    for doc in range(offsets.size - 1):
        set_offsets[doc] = written
        start = offsets[doc]
        length = offsets[doc + 1] - start
        first = written
        prefix[0] = 0
        running, power = np.uint64(0), np.uint64(1)
        words, inside, letters, unspaced_count = np.int64(0), np.int64(0), np.int64(0), np.int64(0)
        for j in range(length):
            point = points[start + j]
            running += np.uint64(point) * power
            power *= _BASE
            prefix[j + 1] = running
            letter = np.int64((point != _SPACE_POINT) & (point != _NEWLINE_POINT))
            word_starts[words] = j
            words += letter & (inside ^ 1)
            word_ends[words - 1 if letter else spare] = j + 1
            inside = letter
            letters += letter
            unspaced_count += unspaced[point]
        if _by_char(kind_code, letters, unspaced_count, min_share):
            spans = max(length - char_k + 1, 1) if length > 0 else 0
            for s in range(spans):
                e = min(s + char_k, length)
                raw = (prefix[e] - prefix[s]) * inverse[s]
                hashes[written] = _fmix64(raw ^ (np.uint64(e - s) * _LENGTH_SALT))
                written += 1
        else:
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


@numba.njit(cache=True, nogil=True)
def pair_jaccard(left_hashes, left_offsets, right_hashes, right_offsets, left_rows, right_rows):
    """Exact Jaccard of each pair of sets (`left_rows[k]` of the left CSR lists, `right_rows[k]` of the right), each
    set sorted and unique, counted by one merge walk per pair; 0 where both sets are empty."""
    out = np.empty(left_rows.size, dtype=np.float64)
    for k in range(left_rows.size):
        i, i_end = left_offsets[left_rows[k]], left_offsets[left_rows[k] + 1]
        j, j_end = right_offsets[right_rows[k]], right_offsets[right_rows[k] + 1]
        union = (i_end - i) + (j_end - j)
        shared = 0
        while i < i_end and j < j_end:
            x, y = left_hashes[i], right_hashes[j]
            if x == y:
                shared += 1
                i += 1
                j += 1
            elif x < y:
                i += 1
            else:
                j += 1
        union -= shared
        out[k] = shared / union if union else 0.0
    return out
