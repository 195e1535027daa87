"""The Bloom filter: nothing added is ever missed, and the share of others let through is what it was sized for."""

from __future__ import annotations

import numpy as np

from pretrain_core.decontam.bloom import BloomFilter


def test_no_false_negatives_and_the_sized_rate() -> None:
    rng = np.random.default_rng(0)
    added = rng.integers(0, 2**64, size=200_000, dtype=np.uint64)
    bloom = BloomFilter.sized(added.size, 1e-3, 2**30)
    bloom.add(added)
    assert bloom.might_contain(added).all()
    others = rng.integers(0, 2**64, size=1_000_000, dtype=np.uint64)
    rate = float(bloom.might_contain(others).mean())
    assert rate < 3e-3 and bloom.expected_rate(added.size) < 1e-3


def test_the_cap_bounds_memory_and_raises_the_rate() -> None:
    rng = np.random.default_rng(1)
    added = rng.integers(0, 2**64, size=100_000, dtype=np.uint64)
    capped = BloomFilter.sized(added.size, 1e-6, 2**14)
    capped.add(added)
    assert capped.words.nbytes <= 2**14 and capped.might_contain(added).all()
    assert capped.expected_rate(added.size) > 0.5  # honest about what the cap costs
