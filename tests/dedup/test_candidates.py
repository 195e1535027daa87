from __future__ import annotations

import numpy as np

from pretrain_core.dedup.candidates import candidate_pairs
from tests.dedup.oracle import buckets_from_keys


def test_buckets_group_equal_keys_and_skip_singletons() -> None:
    keys = np.array([5, 3, 5, 9, 3, 5], dtype=np.uint64)
    docs = np.array([10, 11, 12, 13, 14, 15])
    assert [b.tolist() for b in buckets_from_keys(keys, docs)] == [[11, 14], [10, 12, 15]]
    assert buckets_from_keys(np.empty(0, dtype=np.uint64), np.empty(0, dtype=np.int64)) == []


def test_small_buckets_give_all_pairs_best_ranked_first_without_repeats() -> None:
    rank = np.array([3, 0, 2, 1])
    pairs = candidate_pairs([np.array([0, 1, 2]), np.array([0, 2]), np.array([2, 3])], rank, full_pairs_limit=8)
    assert pairs.tolist() == [[1, 0], [1, 2], [2, 0], [3, 2]]
    assert all(rank[a] < rank[b] for a, b in pairs.tolist())


def test_large_buckets_pair_only_with_their_best_ranked_member() -> None:
    rank = np.arange(100)[::-1].copy()  # document 99 ranks best
    pairs = candidate_pairs([np.arange(100)], rank, full_pairs_limit=10)
    assert len(pairs) == 99 and set(pairs[:, 0].tolist()) == {99}
    assert len(candidate_pairs([np.arange(10)], rank, full_pairs_limit=10)) == 45
    assert candidate_pairs([], rank, full_pairs_limit=10).shape == (0, 2)
