"""Tokenisers of the reference models: a SentencePiece unigram model, or characters (for CJK languages).

Both are trained on the reference text only, deterministically, and encode a batch of lines into one flat id
array plus per-line lengths, the layout the n-gram model consumes. Ids 0, 1, 2 are `<unk>`, `<s>`, `</s>`.
"""

from __future__ import annotations

import io
import itertools
import json
from collections import Counter
from typing import Literal, Protocol

import numpy as np
import sentencepiece as spm

TokenizerKind = Literal["sentencepiece", "characters", "skeleton"]
UNK, BOS, EOS = 0, 1, 2
_SPM_MAX_LINE_BYTES = 1 << 14
_BYTES = 256


class Tokenizer(Protocol):
    kind: TokenizerKind
    vocab_size: int
    bos: int
    eos: int

    def encode(self, lines: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Flat int64 ids of all lines and the int64 number of ids of each line."""
        ...

    def to_bytes(self) -> bytes: ...


class SentencePieceTokenizer:
    """A SentencePiece model with identity normalisation (scores see the text exactly as it will be trained on) and
    byte fallback (characters outside the vocabulary are spelled in bytes, never lost in an `<unk>`)."""

    kind: TokenizerKind = "sentencepiece"
    bos, eos = BOS, EOS

    def __init__(self, model: bytes) -> None:
        self._model = model
        self._sp = spm.SentencePieceProcessor(model_proto=model)
        if (self._sp.unk_id(), self._sp.bos_id(), self._sp.eos_id()) != (UNK, BOS, EOS):
            raise ValueError("SentencePiece model must use ids 0, 1, 2 for <unk>, <s>, </s>")
        self.vocab_size = int(self._sp.get_piece_size())

    @classmethod
    def train(cls, lines: list[str], vocab_size: int, character_coverage: float) -> SentencePieceTokenizer:
        """Train deterministically: one thread, every line in the given order, no sampling or shuffling."""
        # Lines SentencePiece would skip are left out here too, so `required_characters` counts what it sees.
        lines = [line for line in lines if line.strip() and len(line.encode()) <= _SPM_MAX_LINE_BYTES]
        if not lines:
            raise ValueError("no reference text to train a SentencePiece model on")
        required = required_characters(lines, character_coverage)
        model = io.BytesIO()
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(lines),
            model_writer=model,
            model_type="unigram",
            # SentencePiece refuses a vocabulary without room for its characters, the 256 bytes and 3 specials.
            vocab_size=max(vocab_size, required + _BYTES + 3),
            hard_vocab_limit=False,  # a small reference yields a smaller vocabulary instead of an error
            character_coverage=character_coverage,
            normalization_rule_name="identity",
            remove_extra_whitespaces=False,
            # Unseen characters become UTF-8 byte pieces the model has rarely seen, so text in a script the
            # reference lacks scores as unfamiliar; without it a whole run of them is one cheap `<unk>`.
            byte_fallback=True,
            input_sentence_size=0,
            shuffle_input_sentence=False,
            max_sentence_length=_SPM_MAX_LINE_BYTES,
            num_threads=1,
            unk_id=UNK,
            bos_id=BOS,
            eos_id=EOS,
            pad_id=-1,
            minloglevel=2,
        )
        return cls(model.getvalue())

    def encode(self, lines: list[str]) -> tuple[np.ndarray, np.ndarray]:
        pieces = self._sp.encode(lines, out_type=int, num_threads=1)
        lengths = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
        ids = np.fromiter(itertools.chain.from_iterable(pieces), dtype=np.int64, count=int(lengths.sum()))
        return ids, lengths

    def to_bytes(self) -> bytes:
        return self._model


class CharacterTokenizer:
    """Each code point is a token: the natural unit for Chinese and Japanese, with no segmentation model."""

    kind: TokenizerKind = "characters"
    bos, eos = BOS, EOS

    def __init__(self, characters: str) -> None:
        self._characters = characters
        codepoints = np.array([ord(c) for c in characters], dtype=np.uint32)
        self._order = np.argsort(codepoints, kind="stable")
        self._sorted = codepoints[self._order]
        self.vocab_size = len(characters) + 3

    @classmethod
    def train(cls, lines: list[str]) -> CharacterTokenizer:
        """Keep every character of the reference, most frequent first (ties by code point, for determinism).
        A character the reference never used then maps to `<unk>`, which training never saw, so it costs the
        most; capping the vocabulary instead would fold the reference's rare characters into a frequent `<unk>`,
        and text made of rare characters (mojibake in a CJK script) would score as common."""
        counts = Counter(itertools.chain.from_iterable(lines))
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        return cls("".join(char for char, _ in ranked))

    def encode(self, lines: list[str]) -> tuple[np.ndarray, np.ndarray]:
        lengths = np.fromiter(map(len, lines), dtype=np.int64, count=len(lines))
        codepoints = np.frombuffer("".join(lines).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        if not len(self._sorted):
            return np.full(len(codepoints), UNK, dtype=np.int64), lengths
        position = np.minimum(np.searchsorted(self._sorted, codepoints), len(self._sorted) - 1)
        known = self._sorted[position] == codepoints
        return np.where(known, self._order[position] + 3, UNK).astype(np.int64), lengths

    def to_bytes(self) -> bytes:
        return json.dumps({"characters": self._characters}, ensure_ascii=False).encode()

    @classmethod
    def from_bytes(cls, data: bytes) -> CharacterTokenizer:
        return cls(json.loads(data)["characters"])


def required_characters(lines: list[str], coverage: float) -> int:
    """How many distinct characters SentencePiece will insist on: the most frequent ones covering ``coverage``."""
    counts = np.array(sorted(Counter(itertools.chain.from_iterable(lines)).values(), reverse=True), dtype=np.int64)
    if not len(counts):
        return 0
    covered = np.cumsum(counts) / counts.sum()
    return min(int(np.searchsorted(covered, coverage)) + 1, len(counts))


def load_tokenizer(kind: str, data: bytes) -> Tokenizer:
    if kind == "sentencepiece":
        return SentencePieceTokenizer(data)
    if kind == "characters":
        return CharacterTokenizer.from_bytes(data)
    raise ValueError(f"unknown tokenizer kind {kind!r}")
