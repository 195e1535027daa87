"""Text normalisation shared by exact hashing and shingling, so both see the same notion of "the same text".

A batch of texts is normalised at once into one code-point array (`CodePoints`): NFKC and case folding run in
Python's C code per text, word splitting and joining in a compiled kernel (`kernels.compact_words`) over the batch,
so no Python object is made per word. Shingling reads the code points as they are; exact hashing reads their UTF-8.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from pretrain_core.dedup import kernels
from pretrain_core.unicode_table import char_flags, code_points

# What normalisation may ignore: letter case, punctuation (words only, split at anything else), digit values.
Ignorable = Literal["case", "punctuation", "digits"]
DEFAULT_IGNORE: tuple[Ignorable, ...] = ("case", "punctuation")


@dataclass(frozen=True)
class CodePoints:
    """Texts as one code-point array in CSR layout: text ``i`` is ``points[offsets[i]:offsets[i + 1]]``; uint8
    when every text is ASCII (a quarter of the memory, and no widening copy), else uint32."""

    points: np.ndarray
    offsets: np.ndarray

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @staticmethod
    def of(texts: Sequence[str]) -> CodePoints:
        lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        offsets = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        return CodePoints(code_points("".join(texts)), offsets)

    def texts(self) -> list[str]:
        data = self.points.tobytes()
        whole = data.decode("ascii") if self.points.dtype == np.uint8 else data.decode("utf-32-le", "surrogatepass")
        bounds = self.offsets.tolist()
        return [whole[bounds[i] : bounds[i + 1]] for i in range(len(self))]

    def utf8(self) -> tuple[bytes, list[int]]:
        """All texts as UTF-8 (lone surrogates as `surrogatepass` writes them) and each text's byte offsets."""
        buffer = np.empty(4 * self.points.size, dtype=np.uint8)
        bounds = np.empty(len(self) + 1, dtype=np.int64)
        kernels.utf8_encode(self.points, self.offsets, buffer, bounds)
        return buffer[: bounds[-1]].tobytes(), bounds.tolist()

    def take(self, rows: Sequence[int]) -> CodePoints:
        """The texts ``rows``, in that order."""
        index = np.asarray(rows, dtype=np.int64)
        starts, stops = self.offsets[index], self.offsets[index + 1]
        offsets = np.zeros(index.size + 1, dtype=np.int64)
        np.cumsum(stops - starts, out=offsets[1:])
        points = np.empty(int(offsets[-1]), dtype=self.points.dtype)
        kernels.gather(self.points, starts, stops, points, offsets)
        return CodePoints(points, offsets)


def normalize_texts(texts: Sequence[str], ignore: Collection[Ignorable] = DEFAULT_IGNORE) -> CodePoints:
    """NFKC, then what ``ignore`` names folded away; words joined by single spaces.

    By default (case and punctuation, as datatrove does) punctuation and whitespace only separate words (runs of
    ``\\w``), so that "end.Start" stays two words; without "punctuation" words are whitespace-separated and keep
    their punctuation. "digits" writes every run of digits (``\\d``) as 0 (dates and counts then never tell copies
    apart). NFKC folds full-width and compatibility forms, common in CJK text, onto their plain equivalents.
    """
    folded = [text if text.isascii() else unicodedata.normalize("NFKC", text) for text in texts]
    if "case" in ignore:
        folded = [text.lower() for text in folded]
    raw = CodePoints.of(folded)
    # Words, spaces and zeros: never wider than the text's own characters, and never more of them (one slot spare).
    points = np.empty(raw.points.size + 1, dtype=raw.points.dtype)
    offsets = np.empty_like(raw.offsets)
    word = kernels.word_characters("punctuation" in ignore)
    kernels.compact_words(raw.points, raw.offsets, word, char_flags(), "digits" in ignore, points, offsets)
    return CodePoints(points[: offsets[-1]], offsets)


def normalize_text(text: str, ignore: Collection[Ignorable] = DEFAULT_IGNORE) -> str:
    """One text through `normalize_texts`."""
    return normalize_texts([text], ignore).texts()[0]
