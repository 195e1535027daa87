"""Configs for tokenizer training and for packing documents into fixed-length training sequences.

Normalisation is deliberately not configurable: the tokenizer always uses identity normalisation with
whitespace kept as is, so ``decode(encode(text)) == text`` (see ``train.py``); a setting that silently breaks
that contract would corrupt code indentation and any exact-match evaluation.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from pretrain_core.config_base import Seed, StrictModel
from pretrain_core.limits import MAX_SAMPLE_CHARS


class TokenizerConfig(StrictModel):
    """How to train the SentencePiece tokenizer from the filtered corpus."""

    vocab_size: int = Field(
        default=8000,
        ge=512,
        le=1_048_576,
        description="Number of pieces, incl. 256 byte pieces and the special tokens.",
    )
    shrink_vocab_to_fit: bool = Field(
        default=True,
        description="When the training text yields fewer pieces than vocab_size (a stage run alone on a few "
        "documents), train the largest vocabulary it supports, with a warning and both sizes on the tokenizer's "
        "card; off, that is an error naming the size that fits. A corpus of any size never needs it.",
    )
    model_type: Literal["bpe", "unigram"] = Field(default="bpe", description="SentencePiece model type.")
    character_coverage: float = Field(
        default=0.995,
        ge=0.9,
        le=1.0,
        description="Share of characters covered by pieces of their own; the rarest are spelled as UTF-8 bytes. "
        "0.995 suits a vocabulary of a few thousand pieces over text with CJK: SentencePiece's 0.9995 spends nearly "
        "half of 8,000 pieces on single Han characters (bytes per token 5% worse on the demo corpus).",
    )
    byte_fallback: bool = Field(
        default=True,
        description="Spell unknown characters as bytes instead of <unk>; without it decode(encode(text)) is lossy.",
    )
    split_digits: bool = Field(
        default=True, description="Give every digit its own piece so numbers tokenize uniformly."
    )
    allow_whitespace_only_pieces: bool = Field(
        default=True, description="Learn runs of spaces as pieces (code indentation costs one token, not four)."
    )
    split_by_whitespace: bool = Field(default=True, description="Never merge pieces across a space.")
    user_defined_symbols: tuple[str, ...] = Field(
        default=(),
        description="Strings always kept as one piece. None by default: training text keeps its line breaks, so "
        "pieces for them ('\\n', '\\n\\n', '):\\n') are learned like any other.",
    )
    max_training_chars: int = Field(
        default=10_000_000,
        ge=1_000,
        le=MAX_SAMPLE_CHARS,
        description="Characters of text sampled for training (documents chosen by a seeded hash of their id).",
    )
    max_sentence_chars: int = Field(
        default=2048,
        ge=16,
        le=65_536,
        description="Training text is fed in runs of whole lines of at most this many characters; longer lines are "
        "cut into pieces of at most this.",
    )
    seed: Seed = Field(default=0, description="Seed of the document sample.")
    num_threads: int = Field(
        default=1, ge=1, le=256, description="Trainer threads; the model is identical for any count (checked in tests)."
    )


class PackConfig(StrictModel):
    """How documents are assigned to splits (before the mixture) and packed into ``seq_len + 1`` token windows."""

    seq_len: int = Field(
        default=512, ge=16, le=65_536, description="Model context; each sequence holds seq_len + 1 ids."
    )
    validation_fraction: float = Field(
        default=0.02, ge=0.0, le=0.5, description="Share of documents held out for validation."
    )
    test_fraction: float = Field(default=0.02, ge=0.0, le=0.5, description="Share of documents held out for test.")
    min_heldout_docs: int = Field(
        default=2,
        ge=0,
        le=1_000_000,
        description="Per domain, at least this many documents in each held-out split with a non-zero fraction "
        "(a domain always keeps one training document).",
    )
    split_seed: Seed = Field(default=0, description="Seed of the per-document split assignment.")
    order_seed: Seed = Field(default=0, description="Seed of the document order inside a packed stream.")
    by_quality_bucket: bool = Field(
        default=False,
        description="Pack each quality bucket of a domain apart, so every sequence holds one bucket's text (what "
        "train.data.mixing needs to weigh buckets, say to anneal on the head); costs one discarded tail per bucket.",
    )
    add_bos: bool = Field(default=True, description="Put the tokenizer's BOS id before every document.")
    add_eos: bool = Field(default=True, description="Put the tokenizer's EOS id after every document.")
    num_threads: int = Field(default=1, ge=1, le=256, description="SentencePiece encoding threads per shard.")

    @property
    def frame_tokens(self) -> int:
        """Ids the packer puts around every document (BOS, EOS), which the mixture plan counts as the document's."""
        return int(self.add_bos) + int(self.add_eos)

    @model_validator(mode="after")
    def _held_out_leaves_training_data(self) -> PackConfig:
        if self.validation_fraction + self.test_fraction >= 1.0:
            raise ValueError("validation_fraction + test_fraction must be below 1, or nothing is left to train on")
        return self
