"""Seeded per-document keys: every sample, split and order in tokenization and mixture is a sort by these,
so it depends on document ids and a seed only, never on shard layout, row order or the machine."""

from __future__ import annotations

import hashlib


def doc_key(seed: int, doc_id: str) -> int:
    """A seeded 64-bit hash of a document id (or of any string naming a row, such as an id and a copy index)."""
    return int.from_bytes(hashlib.blake2b(f"{seed}\x00{doc_id}".encode(), digest_size=8).digest(), "big")
