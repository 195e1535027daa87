"""`words.split_tokens` and the per-token predicates the rules count (a word: a letter or digit, `words.is_word`;
Gopher's alphabetic token: a letter; a one-character word of an unsegmented script) in one compiled pass over a
text's code points, with no Python object made per token.

Each token comes out as a span with its flags and, for words, a 64-bit hash of its characters (equal words, equal
hashes), so counts, lengths and word ids are array operations. Character classes come from tables of what Python's
own predicates and `words`' regular expressions say of each code point; a test compares the spans, flags and strings
with the plain implementations (tests/clean/token_oracle.py).
"""

from __future__ import annotations

import numba
import numpy as np

from pretrain_core.unicode_table import DECIMAL, SPACE, WORD

WORD_TOKEN, LETTER_TOKEN, UNSEGMENTED_CHAR = (np.uint8(1 << bit) for bit in range(3))
_UNDERSCORE = np.uint32(ord("_"))
# FNV-1a over code points: the word hashes here and the folded-word digests of `quality/folded_words.py`.
HASH_PRIME = np.uint64(0x100000001B3)
HASH_SEED = np.uint64(0xCBF29CE484222325)


@numba.njit(inline="always")
def hash_step(digest, point):
    """FNV-1a's step: the digest after one more code point (start from `HASH_SEED`)."""
    return (digest ^ np.uint64(point)) * HASH_PRIME


@numba.njit(inline="always")
def hash_span(points, start, stop):
    """FNV-1a of points[start:stop]."""
    digest = HASH_SEED
    for i in range(start, stop):
        digest = hash_step(digest, points[i])
    return digest


@numba.njit(inline="always")
def _emit(points, start, stop, flags, keep_without_word, starts, stops, token_flags, hashes, count):
    """Record the token points[start:stop] (unless it has no letter or digit and `keep_without_word` is off);
    returns the new token count."""
    alnum = np.uint8(0)
    letter = np.uint8(0)
    digest = HASH_SEED
    for i in range(start, stop):
        point = points[i]
        char = flags[point]
        is_alnum = np.uint8((char & WORD) != 0 and point != _UNDERSCORE)
        alnum |= is_alnum
        letter |= is_alnum & np.uint8((char & DECIMAL) == 0)
        digest = hash_step(digest, point)
    if not alnum and not keep_without_word:
        return count
    starts[count] = start
    stops[count] = stop
    token_flags[count] = (WORD_TOKEN if alnum else np.uint8(0)) | (LETTER_TOKEN if letter else np.uint8(0))
    hashes[count] = digest
    return count + 1


@numba.njit(cache=True, nogil=True)
def scan_tokens(points, flags, unsegmented, starts, stops, token_flags, hashes):
    """Cut the text into `split_tokens`' tokens: whitespace-separated runs, where a run holding a character of an
    unsegmented script is cut into each such character and the runs between them, keeping only pieces with a letter
    or digit. Writes each token's span, flags and hash; returns the number of tokens (arrays have room for one per
    code point)."""
    n = points.size
    count = 0
    i = 0
    while i < n:
        while i < n and flags[points[i]] & SPACE:
            i += 1
        if i >= n:
            break
        start = i
        mixed = False
        while i < n and not flags[points[i]] & SPACE:
            mixed |= unsegmented[points[i]] != 0
            i += 1
        if not mixed:
            count = _emit(points, start, i, flags, True, starts, stops, token_flags, hashes, count)
            continue
        j = start
        while j < i:
            if unsegmented[points[j]]:
                before = count
                count = _emit(points, j, j + 1, flags, False, starts, stops, token_flags, hashes, count)
                if count > before:
                    token_flags[before] |= UNSEGMENTED_CHAR
                j += 1
                continue
            k = j
            while k < i and not unsegmented[points[k]]:
                k += 1
            count = _emit(points, j, k, flags, False, starts, stops, token_flags, hashes, count)
            j = k
    return count
