"""What Python's own character predicates say of every code point, as one flag table computed once per process:
compiled kernels read it to class characters exactly as `str` methods and `re` do (`str.isalpha`, `str.isupper`,
`str.isdigit`; `re`'s `\\s` (= `str.isspace`), `\\w` and `\\d` (= `str.isdecimal`))."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import numba
import numpy as np

ALPHA, UPPER, DIGIT, DECIMAL, SPACE, WORD = (np.uint8(1 << bit) for bit in range(6))
FLAG_COUNT = 6


@functools.cache
def char_flags() -> np.ndarray:
    """uint8 flags per code point (0 .. 0x10FFFF)."""
    everything = "".join(map(chr, range(0x110000)))
    flags = np.zeros(0x110000, dtype=np.uint8)
    for bit, predicate in ((ALPHA, str.isalpha), (UPPER, str.isupper), (DIGIT, str.isdigit)):
        flags[np.fromiter(map(predicate, everything), dtype=bool, count=len(everything))] |= bit
    for bit, pattern in ((SPACE, r"\s+"), (WORD, r"\w+"), (DECIMAL, r"\d+")):
        for run in re.finditer(pattern, everything):
            flags[run.start() : run.end()] |= bit
    return flags


def code_points(text: str) -> np.ndarray:
    """The text's code points: uint8 when it is ASCII (no widening copy), else uint32 (lone surrogates kept)."""
    if text.isascii():
        return np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    return np.frombuffer(text.encode("utf-32-le", errors="surrogatepass"), dtype=np.uint32)


@dataclass(frozen=True)
class FlagCounts:
    """How many characters of a text have each flag."""

    alpha: int
    upper: int
    digit: int
    decimal: int
    space: int
    word: int


def flag_counts(text: str) -> FlagCounts:
    """How many characters of the text are letters, upper case, digits, ... (one compiled pass)."""
    return FlagCounts(*(int(count) for count in _count_flags(code_points(text), char_flags())))


@numba.njit(cache=True, nogil=True)
def _count_flags(points, flags):
    counts = np.zeros(FLAG_COUNT, dtype=np.int64)
    for i in range(points.size):
        value = flags[points[i]]
        for bit in range(FLAG_COUNT):
            counts[bit] += (value >> bit) & 1
    return counts
