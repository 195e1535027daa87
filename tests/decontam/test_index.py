"""The index: every n-gram added is found with every set holding it, nothing else is, building holds a bounded
amount of memory whatever it is given, and a pickled index carries no loaded arrays."""

from __future__ import annotations

import pickle
import tracemalloc
from pathlib import Path

import numpy as np

from pretrain_core.decontam.index import IndexWriter, NgramIndex


def test_lookup_finds_every_added_ngram_with_its_sets(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    first, second = rng.integers(0, 2**64, size=(2, 50_000), dtype=np.uint64)
    shared = first[:100]
    writer = IndexWriter(["a", "b"], spill_entries=10_000)
    writer.add("a", first)
    writer.add("b", np.concatenate([second, shared]))
    info = writer.finish(str(tmp_path), 1e-3, 2**20, {})
    assert info["distinct_ngrams"] == 100_000 and info["ngrams_per_set"] == {"a": 50_000, "b": 50_100}

    index = NgramIndex.open(str(tmp_path))
    absent = rng.integers(0, 2**64, size=20_000, dtype=np.uint64)
    query = np.concatenate([absent, first, second])
    found = index.lookup(query)
    pairs = set(zip(found.positions.tolist(), found.set_ids.tolist(), strict=True))
    expected = {(20_000 + i, 0) for i in range(50_000)} | {(70_000 + i, 1) for i in range(50_000)}
    assert pairs == expected | {(20_000 + i, 1) for i in range(100)}

    index.bloom()
    assert pickle.loads(pickle.dumps(index))._bloom is None


def test_building_holds_bounded_memory(tmp_path: Path) -> None:
    """Two million n-grams (16 MB of hashes) added a batch at a time: the builder's peak stays a few MB, the
    spilled pairs and one partition, never all of them."""
    rng = np.random.default_rng(2)
    writer = IndexWriter(["big"], spill_entries=100_000)
    tracemalloc.start()
    for _ in range(40):
        writer.add("big", rng.integers(0, 2**64, size=50_000, dtype=np.uint64))
    writer.finish(str(tmp_path), 1e-2, 2**20, {})
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 8 * 2**20, f"peak {peak / 2**20:.1f} MiB"
    assert NgramIndex.open(str(tmp_path)).info["distinct_ngrams"] == 2_000_000
