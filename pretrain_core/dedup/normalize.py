"""Text normalisation shared by exact hashing and shingling, so both see the same notion of "the same text".

A batch of texts is normalised at once into one code-point array (`CodePoints`), with no Python object made per
word. From Python strings (`normalize_texts`), NFKC and case folding run in Python's C code per text and word
splitting and joining in a compiled kernel (`kernels.compact_words`). From an Arrow string array
(`normalize_arrow`, what the stage reads), one compiled pass over its UTF-8 folds each character by table and
compacts the words (`kernels.fold_words`), and only texts with a character whose fold depends on its neighbours
(combining marks, capital sigma) take the Python path: the same code points either way. Shingling reads the code
points as they are; exact hashing reads their UTF-8.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from pretrain_core.dedup import kernels
from pretrain_core.dedup.config import DEFAULT_IGNORE, Ignorable
from pretrain_core.unicode_table import char_flags, code_points, fold_table


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

    def take(self, rows: Sequence[int] | np.ndarray) -> CodePoints:
        """The texts ``rows``, in that order."""
        index = np.asarray(rows, dtype=np.int64)
        starts, stops = self.offsets[index], self.offsets[index + 1]
        offsets = np.zeros(index.size + 1, dtype=np.int64)
        np.cumsum(stops - starts, out=offsets[1:])
        points = np.empty(int(offsets[-1]), dtype=self.points.dtype)
        kernels.gather(self.points, starts, stops, points, offsets)
        return CodePoints(points, offsets)

    def replaced(self, rows: np.ndarray, others: CodePoints) -> CodePoints:
        """These texts with text ``rows[k]`` replaced by ``others``' text ``k``."""
        points = np.concatenate([self.points, others.points.astype(np.result_type(self.points, others.points))])
        offsets = np.concatenate([self.offsets, others.offsets[1:] + self.offsets[-1]])
        order = np.arange(len(self), dtype=np.int64)
        order[rows] = len(self) + np.arange(len(others), dtype=np.int64)
        return CodePoints(points, offsets).take(order)


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


def normalize_arrow(texts: pa.Array, ignore: Collection[Ignorable] = DEFAULT_IGNORE) -> CodePoints:
    """`normalize_texts` of a non-null Arrow string or large-string array, read from its UTF-8 buffer."""
    if texts.null_count:
        raise ValueError("texts to normalise hold nulls")
    offsets = np.frombuffer(texts.buffers()[1], dtype=np.int64 if pa.types.is_large_string(texts.type) else np.int32)
    offsets = offsets[texts.offset : texts.offset + len(texts) + 1].astype(np.int64)
    data = texts.buffers()[2]
    utf8 = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(1, dtype=np.uint8)
    ascii = int(utf8[offsets[0] : offsets[-1]].max(initial=0)) < 0x80
    table = fold_table(lower="case" in ignore)
    points = np.empty(int(offsets[-1] - offsets[0]) + 1, dtype=np.uint8 if ascii else np.uint32)
    out_offsets = np.empty_like(offsets)
    rest = np.zeros(len(texts), dtype=np.bool_)
    word = kernels.word_characters("punctuation" in ignore)
    kernels.fold_words(
        utf8, offsets, table.points, table.expansions, table.offsets, word, char_flags(), "digits" in ignore,
        points, out_offsets, rest,
    )  # fmt: skip
    folded = CodePoints(points[: out_offsets[-1]], out_offsets)
    rows = np.flatnonzero(rest)
    if not rows.size:
        return folded
    return folded.replaced(rows, normalize_texts(texts.take(pa.array(rows)).to_pylist(), ignore))


def normalize_text(text: str, ignore: Collection[Ignorable] = DEFAULT_IGNORE) -> str:
    """One text through `normalize_texts`."""
    return normalize_texts([text], ignore).texts()[0]
