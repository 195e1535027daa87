"""The hash-key table finds exactly the stored keys, whatever the key distribution's clumps and gaps."""

from __future__ import annotations

import numpy as np
import pytest

from pretrain_core.quality.lookup import KeyTable
from pretrain_core.quality.ngram import extend_left


def _hash_keys(n: int, seed: int) -> np.ndarray:
    tokens = np.random.default_rng(seed).integers(0, 50_000, n)
    return np.unique(extend_left(np.full(n, 7, dtype=np.uint64), tokens))


def test_finds_every_key_and_no_other() -> None:
    keys = _hash_keys(20_000, seed=1)
    table = KeyTable(keys)
    assert np.array_equal(table.find(keys), np.arange(len(keys)))
    others = np.setdiff1d(_hash_keys(20_000, seed=2), keys)
    assert len(others) > 1000
    assert np.all(table.find(others) == -1)
    mixed = np.concatenate([others[:500], keys[::7]])
    expected = np.concatenate([np.full(500, -1), np.arange(len(keys))[::7]])
    assert np.array_equal(table.find(mixed), expected)


def test_clumped_keys_that_share_home_slots() -> None:
    """Keys packed into a narrow range all hash to the same few home slots: probing must still find them."""
    keys = np.arange(1, 2001, dtype=np.uint64) * np.uint64(2) + np.uint64(2**62)
    table = KeyTable(keys)
    assert np.array_equal(table.find(keys), np.arange(2000))
    assert np.all(table.find(keys + np.uint64(1)) == -1)
    assert np.all(table.find(np.array([1, 2**64 - 1], dtype=np.uint64)) == -1)


def test_empty_table_and_bad_input() -> None:
    assert np.array_equal(KeyTable(np.zeros(0, dtype=np.uint64)).find(np.array([5], np.uint64)), [-1])
    with pytest.raises(ValueError):
        KeyTable(np.array([3, 2], dtype=np.uint64))
    with pytest.raises(ValueError):
        KeyTable(np.array([0, 2], dtype=np.uint64))
    with pytest.raises(TypeError):
        KeyTable(np.array([1, 2], dtype=np.int64))
