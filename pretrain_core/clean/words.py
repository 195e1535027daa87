"""Words as the heuristics count them, for spaced and unspaced scripts alike.

Gopher's thresholds assume words separated by spaces. Chinese, Japanese, Thai, Lao, Khmer and Burmese put no
spaces between words, so there each character counts as one word (a Chinese word averages 1.5 characters, close
enough for thresholds such as "at least 50 words"). Punctuation glued to such characters is not a word, just as
the comma in "Hello," is not a word of its own.

`split_tokens` and `is_word` define tokens and words on a string; `scan_tokens` gives the same tokens of a whole
document as spans with their flags in one compiled pass (`token_kernel`), which is what the rules and signals
count with.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from pretrain_core.clean import token_kernel
from pretrain_core.unicode_table import char_flags, code_points

UNSEGMENTED_CLASS = (
    "\u0e00-\u0eff"  # Thai, Lao
    "\u1000-\u109f"  # Myanmar
    "\u1780-\u17ff"  # Khmer
    "\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f"  # kana
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"  # Han
)
_ALNUM = re.compile(r"[^\W_]")
_UNSEGMENTED_CHAR = re.compile(f"[{UNSEGMENTED_CLASS}]")
_UNSEGMENTED_PIECES = re.compile(f"[{UNSEGMENTED_CLASS}]|[^{UNSEGMENTED_CLASS}]+")


def split_tokens(text: str) -> list[str]:
    """Whitespace tokens, with every unsegmented-script character split off as a token of its own.

    Pieces of such tokens without a letter or digit (the "，" in "你好，世界") are dropped; whitespace tokens made
    only of symbols ("—", "|") are kept, because Gopher's alphabetic-word rule counts them against a document.
    """
    tokens: list[str] = []
    for token in text.split():
        if token.isascii() or not _UNSEGMENTED_CHAR.search(token):
            tokens.append(token)
            continue
        tokens.extend(piece for piece in _UNSEGMENTED_PIECES.findall(token) if _has_alnum(piece))
    return tokens


def is_word(token: str) -> bool:
    """A token with at least one letter or digit: what word counts and word lengths are about."""
    return _has_alnum(token)


def _has_alnum(text: str) -> bool:
    return text.isalnum() or _ALNUM.search(text) is not None


@dataclass(frozen=True)
class Tokens:
    """A text's `split_tokens` as spans (code-point offsets) with their `token_kernel` flags and hashes: counts,
    lengths and word ids without a Python string per token."""

    text: str
    starts: np.ndarray
    stops: np.ndarray
    flags: np.ndarray
    hashes: np.ndarray

    def __len__(self) -> int:
        return self.starts.size

    def count(self, flag: np.uint8) -> int:
        """Tokens with ``flag`` (`token_kernel.WORD_TOKEN`, `LETTER_TOKEN`, `UNSEGMENTED_CHAR`)."""
        return int(np.count_nonzero(self.flags & flag))

    def words(self) -> Tokens:
        """The tokens that are words (`is_word`)."""
        keep = (self.flags & token_kernel.WORD_TOKEN) != 0
        return Tokens(self.text, self.starts[keep], self.stops[keep], self.flags[keep], self.hashes[keep])

    def strings(self, rows: np.ndarray | None = None) -> Iterator[str]:
        """The tokens' text (of ``rows`` only, if given), one at a time."""
        text = self.text
        starts, stops = (self.starts, self.stops) if rows is None else (self.starts[rows], self.stops[rows])
        for start, stop in zip(starts.tolist(), stops.tolist(), strict=True):
            yield text[start:stop]

    def lengths(self) -> np.ndarray:
        return self.stops - self.starts

    def first_appearance(self) -> tuple[np.ndarray, np.ndarray]:
        """Each token as a small integer, numbered by first appearance (equal tokens, equal ids; tokens are told apart
        by a 64-bit hash of their characters), and the row where each id first appears."""
        if not self.hashes.size:
            return np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64)
        _, first, inverse = np.unique(self.hashes, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        rank = np.empty(first.size, dtype=np.uint64)
        rank[order] = np.arange(first.size, dtype=np.uint64)
        return rank[inverse.ravel()], first[order]


def scan_tokens(text: str) -> Tokens:
    """`split_tokens` of ``text`` with each token's flags, in one compiled pass."""
    points = code_points(text)
    room = points.size
    starts, stops = np.empty(room, dtype=np.int64), np.empty(room, dtype=np.int64)
    flags, hashes = np.empty(room, dtype=np.uint8), np.empty(room, dtype=np.uint64)
    n = token_kernel.scan_tokens(points, char_flags(), unsegmented_table(), starts, stops, flags, hashes)
    return Tokens(text, starts[:n].copy(), stops[:n].copy(), flags[:n].copy(), hashes[:n].copy())


@functools.cache
def unsegmented_table() -> np.ndarray:
    """Per code point, 1 if it is in `UNSEGMENTED_CLASS`."""
    everything = "".join(map(chr, range(0x110000)))
    table = np.zeros(0x110000, dtype=np.uint8)
    for match in re.finditer(f"[{UNSEGMENTED_CLASS}]+", everything):
        table[match.start() : match.end()] = 1
    return table
