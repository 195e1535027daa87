"""From buckets of documents that share a sketch band to the candidate pairs worth verifying."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def candidate_pairs(buckets: Iterable[np.ndarray], rank: np.ndarray, full_pairs_limit: int) -> np.ndarray:
    """Unique pairs ``(a, b)`` with ``rank[a] < rank[b]`` of documents that share a bucket, as an (n, 2) array.

    A bucket of up to ``full_pairs_limit`` documents yields all its pairs; a larger one (a big family of
    near-copies) pairs each member only with its best-ranked document, its likely representative, so a
    bucket of n documents costs n pairs instead of n²/2.
    """
    buckets = list(buckets)
    twos = [b for b in buckets if b.size == 2]  # the common case, paired in one array operation below
    chunks = [np.empty((0, 2), dtype=np.int64), np.array(twos, dtype=np.int64).reshape(-1, 2)]
    for bucket in buckets:
        if bucket.size == 2:
            continue
        members = bucket[np.argsort(rank[bucket], kind="stable")]
        if members.size <= full_pairs_limit:
            first, second = np.triu_indices(members.size, k=1)
            chunks.append(np.stack((members[first], members[second]), axis=1))
        else:
            chunks.append(np.stack((np.full(members.size - 1, members[0]), members[1:]), axis=1))
    pairs = np.concatenate(chunks).astype(np.int64)
    swap = rank[pairs[:, 0]] > rank[pairs[:, 1]]
    pairs[swap] = pairs[swap][:, ::-1]
    return np.unique(pairs, axis=0)
