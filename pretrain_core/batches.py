"""Cutting a shard's texts into batches of bounded size, so that per-batch work (compiled kernels, SentencePiece
calls) holds a bounded amount of text at once whatever the shard's size."""

from __future__ import annotations

from collections.abc import Iterator, Sequence


def char_batches(texts: Sequence[str], batch_chars: int) -> Iterator[tuple[int, int]]:
    """Consecutive index ranges of about ``batch_chars`` characters (at least one text each)."""
    start, size = 0, 0
    for i, text in enumerate(texts):
        size += len(text)
        if size >= batch_chars:
            yield start, i + 1
            start, size = i + 1, 0
    if start < len(texts):
        yield start, len(texts)
