"""The SentencePiece model behind the token shards: read from any URL, identified by its content hash."""

from __future__ import annotations

import hashlib

import sentencepiece as spm

from pretrain_core import storage


def load_tokenizer(url: str) -> tuple[spm.SentencePieceProcessor, str]:
    """The processor and the sha256 of its model file (stored in checkpoints to catch a mismatched tokenizer)."""
    proto = storage.read_bytes(url)
    return spm.SentencePieceProcessor(model_proto=proto), hashlib.sha256(proto).hexdigest()
