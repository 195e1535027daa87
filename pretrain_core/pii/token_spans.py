"""The tagger's tokens (`tokens.token_texts`, a regular expression) of a whole batch of texts in one compiled pass:
offsets and a 64-bit hash of each token's characters, no Python string per token.

The expression is `[Han Kana]|[^\\W_ Han Kana]+(?:[-'’][^\\W_ Han Kana]+)*|\\S`: a Han or kana character alone, a
run of other letters and digits with inner hyphens and apostrophes, or any other non-space character alone. The
pass reads each code point's class from a table made from `re`'s own `\\w` and `\\s` (`unicode_table.char_flags`);
a test compares its tokens with the expression's on random text. Hashes are FNV-1a over code points, as the clean
stage's word hashes are: the featurizer knows token types by them (two different tokens share one with probability
2**-64).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numba
import numpy as np

from pretrain_core.clean.token_kernel import hash_span
from pretrain_core.unicode_table import SPACE, WORD, char_flags, code_points

_HAN_KANA = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x3040, 0x30FF))  # tokens.py's _HAN, _KANA
_ALONE, _RUN, _BLANK = (np.uint8(1 << bit) for bit in range(3))  # a token by itself; in a run; whitespace
_HYPHEN, _APOSTROPHE, _RIGHT_QUOTE = ord("-"), ord("'"), ord("’")


@functools.cache
def _classes() -> np.ndarray:
    flags = char_flags()
    classes = np.where(flags & SPACE, _BLANK, np.uint8(0)).astype(np.uint8)
    classes[((flags & WORD) != 0) & ((flags & SPACE) == 0)] |= _RUN
    classes[ord("_")] &= ~_RUN
    for low, high in _HAN_KANA:
        classes[low : high + 1] = _ALONE
    return classes


@numba.njit(inline="always")
def _joins(point):
    """A hyphen or apostrophe, which may join two runs of letters and digits into one token."""
    return point in (_HYPHEN, _APOSTROPHE, _RIGHT_QUOTE)


@numba.njit(cache=True, nogil=True)
def _scan(points, offsets, classes, starts, ends, hashes, bounds):
    """Write each text's tokens (offsets within the text) and their hashes; ``bounds[d]`` is where text d's
    tokens begin. Returns the number of tokens."""
    count = 0
    for d in range(offsets.size - 1):
        bounds[d] = count
        base, n = offsets[d], offsets[d + 1] - offsets[d]
        i = 0
        while i < n:
            kind = classes[points[base + i]]
            if kind & _BLANK:
                i += 1
                continue
            start = i
            i += 1
            if kind & _RUN:
                while i < n and classes[points[base + i]] & _RUN:
                    i += 1
                while i + 1 < n and _joins(points[base + i]) and classes[points[base + i + 1]] & _RUN:
                    i += 2
                    while i < n and classes[points[base + i]] & _RUN:
                        i += 1
            starts[count], ends[count], hashes[count] = start, i, hash_span(points, base + start, base + i)
            count += 1
    bounds[offsets.size - 1] = count
    return count


@dataclass(frozen=True)
class TokenSpans:
    """Tokens of a batch of texts: text d's are rows ``bounds[d]:bounds[d + 1]``, with offsets within text d."""

    starts: np.ndarray
    ends: np.ndarray
    hashes: np.ndarray
    bounds: np.ndarray

    def of(self, d: int) -> tuple[np.ndarray, np.ndarray]:
        """(starts, ends) of text d's tokens."""
        rows = slice(self.bounds[d], self.bounds[d + 1])
        return self.starts[rows], self.ends[rows]

    def text_of_row(self) -> np.ndarray:
        """The text each token row belongs to."""
        return np.repeat(np.arange(self.bounds.size - 1), np.diff(self.bounds))


def scan_token_spans(texts: list[str]) -> TokenSpans:
    """`tokens.token_texts` of every text as offsets and hashes, in one compiled pass."""
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    points = code_points("".join(texts))
    room = points.size
    starts, ends = np.empty(room, dtype=np.int64), np.empty(room, dtype=np.int64)
    hashes, bounds = np.empty(room, dtype=np.uint64), np.empty(len(texts) + 1, dtype=np.int64)
    count = _scan(points, offsets, _classes(), starts, ends, hashes, bounds)
    return TokenSpans(starts[:count].copy(), ends[:count].copy(), hashes[:count].copy(), bounds)
