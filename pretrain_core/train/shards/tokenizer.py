"""The SentencePiece model behind the token shards: read from any URL, identified by its content hash."""

from __future__ import annotations

import hashlib

import sentencepiece as spm

from pretrain_core import storage


def load_tokenizer(url: str) -> tuple[spm.SentencePieceProcessor, str]:
    """The processor and the sha256 of its model file (stored in checkpoints to catch a mismatched tokenizer)."""
    return tokenizer_from_proto(storage.read_bytes(url))


def tokenizer_from_proto(proto: bytes) -> tuple[spm.SentencePieceProcessor, str]:
    """The processor of a serialised model and the model's sha256."""
    return spm.SentencePieceProcessor(model_proto=proto), hashlib.sha256(proto).hexdigest()
