"""N-gram hashes of documents, position by position, over text normalised as dedup normalises it.

A unit is a word of the normalised text (words joined by single spaces), except that every character of a script
written without spaces (Chinese, Japanese, Thai...; dedup's table) is a unit of its own, wherever it occurs: a
Japanese passage pasted into an English page has the same units as the passage alone. N-gram ``k`` of a document
covers units ``k .. k + n - 1``; its hash is a polynomial over the units' own 64-bit hashes, so it is the same
wherever the n-gram occurs. `unit_spans` maps units back to characters of the original text, for redaction.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import numba
import numpy as np
import pyarrow as pa

from pretrain_core.dedup import kernels
from pretrain_core.dedup.config import Ignorable
from pretrain_core.dedup.normalize import CodePoints, normalize_arrow, normalize_text

_SPACE, _NEWLINE = np.uint32(0x20), np.uint32(0x0A)
_UNIT_BASE = np.uint64(0x100000001B3)
_NGRAM_BASE = np.uint64(0x9E3779B97F4A7C15)  # odd: invertible modulo 2**64
_NGRAM_INVERSE = np.uint64(pow(0x9E3779B97F4A7C15, -1, 1 << 64))
_LENGTH_SALT = np.uint64(0xC2B2AE3D27D4EB4F)


@dataclass(frozen=True)
class NgramHashes:
    """Per document, its n-gram hashes in position order (CSR: document ``i`` owns
    ``hashes[offsets[i]:offsets[i + 1]]``); a document with fewer units than one n-gram has none."""

    hashes: np.ndarray
    offsets: np.ndarray

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def of(self, doc: int) -> np.ndarray:
        return self.hashes[self.offsets[doc] : self.offsets[doc + 1]]

    @property
    def doc_of(self) -> np.ndarray:
        """The document of every hash."""
        return np.repeat(np.arange(len(self), dtype=np.int64), np.diff(self.offsets))


def normalised(texts: pa.Array, ignore: Collection[Ignorable]) -> CodePoints:
    return normalize_arrow(texts, ignore)


def ngram_hashes(texts: CodePoints, ngram: int, unspaced_chars_per_word: float) -> NgramHashes:
    """Every n-gram of every (normalised) document: from each unit, the fewest units weighing ``ngram`` words, a
    character of an unspaced script weighing 1 / ``unspaced_chars_per_word`` of one."""
    points, offsets = texts.points, texts.offsets
    out = np.empty(points.size + 1, dtype=np.uint64)
    out_offsets = np.empty(offsets.size, dtype=np.int64)
    word, char = unit_weights(unspaced_chars_per_word)
    unspaced = kernels.unspaced_characters()
    _ngram_hashes(points, offsets, unspaced, word, char, ngram * word, _NGRAM_INVERSE, out, out_offsets)
    return NgramHashes(out[: out_offsets[-1]].copy(), out_offsets)


def unit_weights(unspaced_chars_per_word: float) -> tuple[int, int]:
    """(word, unspaced character) weights in integers: tenths of a character."""
    return round(10 * unspaced_chars_per_word), 10


@numba.njit(cache=True, nogil=True)
def _ngram_hashes(
    points, offsets, unspaced, word_weight, char_weight, span_weight, inverse_base, out, out_offsets
):  # pragma: no cover
    longest = 0
    for doc in range(offsets.size - 1):
        longest = max(longest, offsets[doc + 1] - offsets[doc])
    units = np.empty(longest + 1, dtype=np.uint64)
    weights = np.zeros(longest + 2, dtype=np.int64)  # prefix sums of the units' weights
    prefix = np.empty(longest + 2, dtype=np.uint64)
    inverse = np.empty(longest + 2, dtype=np.uint64)
    inverse[0] = 1
    for j in range(1, longest + 2):
        inverse[j] = inverse[j - 1] * inverse_base
    written = 0
    for doc in range(offsets.size - 1):
        out_offsets[doc] = written
        count = 0
        running = np.uint64(0)
        inside = False
        for j in range(offsets[doc], offsets[doc + 1]):
            point = points[j]
            space = (point == _SPACE) | (point == _NEWLINE)
            if space or unspaced[point]:
                if inside:
                    units[count] = kernels._fmix64(running)
                    weights[count + 1] = weights[count] + word_weight
                    count += 1
                running, inside = np.uint64(0), False
                if not space:
                    units[count] = kernels._fmix64(np.uint64(point) ^ _LENGTH_SALT)
                    weights[count + 1] = weights[count] + char_weight
                    count += 1
            else:
                running = running * _UNIT_BASE + np.uint64(point)
                inside = True
        if inside:
            units[count] = kernels._fmix64(running)
            weights[count + 1] = weights[count] + word_weight
            count += 1
        total, power = np.uint64(0), np.uint64(1)
        prefix[0] = 0
        for u in range(count):
            total += units[u] * power
            power *= _NGRAM_BASE
            prefix[u + 1] = total
        end = 0
        for k in range(count):
            end = max(end, k + 1)
            while end < count and weights[end] - weights[k] < span_weight:
                end += 1
            if weights[end] - weights[k] < span_weight:
                break
            raw = (prefix[end] - prefix[k]) * inverse[k]
            out[written] = kernels._fmix64(raw ^ (np.uint64(end - k) * _LENGTH_SALT))
            written += 1
    out_offsets[offsets.size - 1] = written


def window_ends(units: list[str], ngram: int, unspaced_chars_per_word: float) -> list[int]:
    """For each unit that starts an n-gram, the unit after its last (what the kernel hashes from there)."""
    word_weight, char_weight = unit_weights(unspaced_chars_per_word)
    unspaced = kernels.unspaced_characters()
    weights = [char_weight if len(u) == 1 and unspaced[ord(u)] else word_weight for u in units]
    ends, end, held = [], 0, 0
    for k in range(len(units)):
        while end < len(units) and held < ngram * word_weight:
            held += weights[end]
            end += 1
        if held < ngram * word_weight:
            break
        ends.append(end)
        held -= weights[k]
    return ends


def units_of(normal: str) -> list[str]:
    """The units of normalised text (Python's reading of what the kernel hashes)."""
    unspaced = kernels.unspaced_characters()
    units: list[str] = []
    for word in normal.split():
        run = ""
        for char in word:
            if unspaced[ord(char)]:
                units += [run, char] if run else [char]
                run = ""
            else:
                run += char
        if run:
            units.append(run)
    return units


def unit_spans(text: str, ignore: Collection[Ignorable]) -> tuple[list[str], list[tuple[int, int]]] | None:
    """The units of ``text`` and where each comes from (start, end), or None when the two cannot be
    lined up (a character whose normal form joins or splits words across a boundary): the caller then drops.

    A word whose normal form has its length maps unit by unit; any other maps each of its units to all of it."""
    word = kernels.word_characters("punctuation" in ignore)
    spans: list[tuple[int, int]] = []
    units: list[str] = []
    start = None
    for index, char in enumerate([*text, " "]):
        inside = index < len(text) and bool(word[ord(char)])
        if inside and start is None:
            start = index
        elif not inside and start is not None:
            normal = normalize_text(text[start:index], ignore)
            mine = units_of(normal)
            if len(normal) == index - start:
                at = start
                for unit in mine:
                    at = start + normal.index(unit, at - start)
                    spans.append((at, at + len(unit)))
                    at += len(unit)
            else:
                spans += [(start, index)] * len(mine)
            units += mine
            start = None
    return (units, spans) if units == units_of(normalize_text(text, ignore)) else None
