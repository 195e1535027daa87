"""Cut a token stream into fixed windows of ``seq_len + 1`` ids that overlap by one id.

Window ``w`` holds stream positions ``[w*seq_len, (w+1)*seq_len]``: its last id is the next window's first, so
every id after the first is a training target exactly once (input = ids[:-1], target = ids[1:]) and no
transition between windows goes untrained. What is left after the last full window (fewer than ``seq_len``
ids, or the whole stream if it is shorter than one window) is the tail: it is counted, never padded.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa


@dataclass(frozen=True)
class PackedStream:
    """Windows of one stream plus which documents each touches and which ones fell entirely into the tail."""

    windows: pa.ListArray  # list<int32>, each seq_len + 1 ids
    doc_indices: pa.ListArray  # list<int64>: indices (into the stream's documents) of each window's documents
    tail_tokens: int  # stream ids that are in no window
    tail_docs: np.ndarray  # documents whose every id is in the tail


def concatenate_documents(docs: pa.ListArray, bos: int | None, eos: int | None) -> tuple[np.ndarray, np.ndarray]:
    """The stream (BOS + ids + EOS per document, as int32) and each document's start offset plus the end."""
    lengths = np.asarray(docs.value_lengths(), dtype=np.int64)
    extra = (bos is not None) + (eos is not None)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths + extra, out=offsets[1:])
    stream = np.empty(int(offsets[-1]), dtype=np.int32)
    body = np.ones(len(stream), dtype=bool)
    if bos is not None:
        stream[offsets[:-1]] = bos
        body[offsets[:-1]] = False
    if eos is not None:
        stream[offsets[1:] - 1] = eos
        body[offsets[1:] - 1] = False
    stream[body] = np.asarray(docs.flatten(), dtype=np.int32)
    return stream, offsets


def pack_stream(stream: np.ndarray, offsets: np.ndarray, seq_len: int) -> PackedStream:
    """Windows over ``stream``; ``offsets`` are the document boundaries from ``concatenate_documents``."""
    n_windows = (len(stream) - 1) // seq_len if len(stream) > seq_len else 0
    covered = n_windows * seq_len + 1 if n_windows else 0
    starts = np.arange(n_windows, dtype=np.int64) * seq_len
    rows = np.lib.stride_tricks.sliding_window_view(stream, seq_len + 1)[::seq_len][:n_windows] if n_windows else None
    values = np.ascontiguousarray(rows).reshape(-1) if rows is not None else np.empty(0, dtype=np.int32)
    windows = pa.ListArray.from_arrays(
        pa.array(np.arange(n_windows + 1, dtype=np.int32) * (seq_len + 1)), pa.array(values, pa.int32())
    )
    doc_starts, doc_ends = offsets[:-1], offsets[1:]
    first = np.searchsorted(doc_ends, starts, side="right")  # first document ending after the window start
    last = np.searchsorted(doc_starts, starts + seq_len, side="right")  # one past the last starting inside it
    counts = last - first
    doc_offsets = np.zeros(n_windows + 1, dtype=np.int64)
    np.cumsum(counts, out=doc_offsets[1:])
    members = np.repeat(first - doc_offsets[:-1], counts) + np.arange(int(doc_offsets[-1]), dtype=np.int64)
    doc_indices = pa.ListArray.from_arrays(pa.array(doc_offsets.astype(np.int32)), pa.array(members, pa.int64()))
    return PackedStream(
        windows=windows,
        doc_indices=doc_indices,
        tail_tokens=len(stream) - covered,
        tail_docs=np.flatnonzero(doc_starts >= covered),
    )


def dominant_documents(packed: PackedStream, offsets: np.ndarray, seq_len: int) -> np.ndarray:
    """For each window, the index of the document with the most ids in it (the earlier one on a tie)."""
    members = np.asarray(packed.doc_indices.flatten(), dtype=np.int64)
    counts: np.ndarray = np.diff(packed.doc_indices.offsets.to_numpy().astype(np.int64))
    window_of = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    starts = window_of * seq_len
    overlap = np.minimum(offsets[members + 1], starts + seq_len + 1) - np.maximum(offsets[members], starts)
    order = np.lexsort((np.arange(len(members)), -overlap, window_of))
    _, first = np.unique(window_of[order], return_index=True)
    return members[order[first]]
