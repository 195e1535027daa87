"""Batch encoding with the trained tokenizer, straight into Arrow/numpy so nothing is copied id by id.

Encoding is exact: ``tokenizer.decode(ids)`` gives back the text. SentencePiece writes spaces as U+2581 ("▁")
inside its pieces, so a real "▁" in the input (sparkline charts, texts about tokenizers) would come back as a
space; it is spelled with its three UTF-8 byte pieces instead, which decode to the character itself.
"""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
import sentencepiece as spm

from pretrain_core import storage

PIECE_SPACE = "\u2581"  # how SentencePiece writes a space inside its pieces


def load_tokenizer(url: str) -> spm.SentencePieceProcessor:
    """The tokenizer at ``url`` (any storage URL; the model is small, so it is read into memory)."""
    return spm.SentencePieceProcessor(model_proto=storage.read_bytes(url))


def encode_texts(tokenizer: spm.SentencePieceProcessor, texts: list[str], num_threads: int = 1) -> list[list[int]]:
    """Token ids of every text, exactly decodable (SentencePiece encodes the batch in C++ threads)."""
    ids: list[list[int]] = tokenizer.encode(texts, num_threads=num_threads)
    marked = [i for i, text in enumerate(texts) if PIECE_SPACE in text]
    mark = _byte_pieces(tokenizer, PIECE_SPACE) if marked else None
    if mark is not None:
        for i in marked:
            parts = tokenizer.encode(texts[i].split(PIECE_SPACE))
            ids[i] = [*parts[0], *itertools.chain.from_iterable([*mark, *part] for part in parts[1:])]
    return ids


def encode_batch(tokenizer: spm.SentencePieceProcessor, texts: list[str], num_threads: int = 1) -> pa.ListArray:
    """Token ids of every text as one ``list<int32>`` array."""
    ids = encode_texts(tokenizer, texts, num_threads)
    lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
    offsets = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if offsets[-1] > np.iinfo(np.int32).max:
        raise ValueError(f"{offsets[-1]} tokens in one batch overflow Arrow list offsets; encode smaller batches")
    # fromiter over the flattened lists is ~5x faster than pa.array on a list of lists.
    values = np.fromiter(itertools.chain.from_iterable(ids), dtype=np.int32, count=int(offsets[-1]))
    return pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), pa.array(values))


def round_trip_failures(tokenizer: spm.SentencePieceProcessor, texts: list[str]) -> list[int]:
    """Indices of texts that do not decode back to themselves (none, unless the model lacks byte fallback)."""
    decoded = tokenizer.decode(encode_texts(tokenizer, texts))
    return [i for i, (text, back) in enumerate(zip(texts, decoded, strict=True)) if text != back]


def _byte_pieces(tokenizer: spm.SentencePieceProcessor, char: str) -> list[int] | None:
    """The byte-fallback pieces spelling ``char``; None for a model trained without byte fallback."""
    ids = [tokenizer.piece_to_id(f"<0x{byte:02X}>") for byte in char.encode("utf-8")]
    return ids if all(tokenizer.is_byte(i) for i in ids) else None
