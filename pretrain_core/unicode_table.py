"""What Python's own character functions say of every code point, as tables computed once per process: compiled
kernels read them to class characters exactly as `str` methods and `re` do (`char_flags`: `str.isalpha`,
`str.isupper`, `str.isdigit`; `re`'s `\\s` (= `str.isspace`), `\\w` and `\\d` (= `str.isdecimal`)), and to
fold text exactly as NFKC and `str.lower` do wherever a character's neighbours cannot change the result
(`fold_table`)."""

from __future__ import annotations

import functools
import re
import unicodedata
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


FOLD_CONTEXTUAL = np.uint32(0xFFFFFFFF)  # `fold_table`: the text must go through Python's own NFKC and lower
FOLD_EXPANDS = np.uint32(0x80000000)  # `fold_table`: this bit plus an index into the expansions
_HANGUL_VOWELS_AND_TRAILS = (*range(0x1161, 0x1176), *range(0x11A8, 0x11C3))  # composed algorithmically


@dataclass(frozen=True)
class FoldTable:
    """What ``unicodedata.normalize("NFKC", c)`` (then ``.lower()``, if asked) makes of each code point ``c`` alone.

    ``points[c]`` is the folded character; `FOLD_EXPANDS` | k where it folds to several, written in
    ``expansions[offsets[k]:offsets[k + 1]]``; `FOLD_CONTEXTUAL` where the result may depend on the neighbours.
    A text whose characters are all context-free folds to the concatenation of their folds: NFKC of a string is the
    concatenation of its characters' NFKC as long as every character's decomposition starts with a starter
    (combining class 0) that composes with nothing before it, and `str.lower` is per character except for the
    final-sigma rule of capital sigma and lower-case forms longer than one character.
    """

    points: np.ndarray
    expansions: np.ndarray
    offsets: np.ndarray


@functools.cache
def fold_table(lower: bool) -> FoldTable:
    """The NFKC (and lower-case) fold of every code point, or `FOLD_CONTEXTUAL` where context decides it.

    Unassigned and private-use code points (seven in eight) have no decomposition, compose with nothing and have
    no case: each folds to itself, so only the assigned ones go through `unicodedata` (0.5 CPU s, not 1.2; a test
    compares the table with the one every code point gives)."""
    categories = [unicodedata.category(chr(point)) for point in range(0x110000)]
    itself = np.array([category in ("Cn", "Co") for category in categories])
    assigned = [point for point, category in enumerate(categories) if category not in ("Cn", "Co", "Cs")]
    return fold_table_of(assigned, itself, lower)


def fold_table_of(points_to_fold: list[int], itself: np.ndarray, lower: bool) -> FoldTable:
    """The fold table with ``points_to_fold`` folded as `fold_table` says, the code points marked in ``itself``
    folding to themselves, and every other one `FOLD_CONTEXTUAL`."""
    composes_backwards = set(_HANGUL_VOWELS_AND_TRAILS)
    for point in points_to_fold:
        decomposition = unicodedata.decomposition(chr(point)).split()
        if len(decomposition) == 2 and not decomposition[0].startswith("<"):
            composes_backwards.add(int(decomposition[1], 16))
    points = np.full(0x110000, FOLD_CONTEXTUAL, dtype=np.uint32)
    points[itself] = np.flatnonzero(itself)
    expansions: list[int] = []
    offsets = [0]
    for point in points_to_fold:
        if 0xD800 <= point <= 0xDFFF:
            continue  # lone surrogates never come out of UTF-8
        char = chr(point)
        starter = unicodedata.normalize("NFKD", char)[0]
        if unicodedata.combining(starter) or ord(starter) in composes_backwards:
            continue
        folded = unicodedata.normalize("NFKC", char)
        if lower:
            if "\u03a3" in folded:  # capital sigma lowers by its context
                continue
            lowered = folded.lower()
            if len(lowered) != len(folded):
                continue
            folded = lowered
        if len(folded) == 1:
            points[point] = ord(folded)
        else:
            points[point] = FOLD_EXPANDS | np.uint32(len(offsets) - 1)
            expansions.extend(map(ord, folded))
            offsets.append(len(expansions))
    return FoldTable(points, np.asarray(expansions, dtype=np.uint32), np.asarray(offsets, dtype=np.int64))


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
