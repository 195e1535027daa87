"""Cutting a shard's texts into batches of bounded size, so that per-batch work (compiled kernels, SentencePiece
calls) holds a bounded amount of text at once whatever the shard's size."""

from __future__ import annotations

from collections.abc import Iterator, Sequence


def char_batches(texts: Sequence[str], batch_chars: int) -> Iterator[tuple[int, int]]:
    """Consecutive index ranges of about ``batch_chars`` characters (at least one text each)."""
    return size_batches([len(text) for text in texts], batch_chars)


def size_batches(sizes: Sequence[int], batch_size: int) -> Iterator[tuple[int, int]]:
    """Consecutive index ranges whose ``sizes`` add up to about ``batch_size`` (at least one item each)."""
    start, total = 0, 0
    for i, size in enumerate(sizes):
        total += size
        if total >= batch_size:
            yield start, i + 1
            start, total = i + 1, 0
    if start < len(sizes):
        yield start, len(sizes)
