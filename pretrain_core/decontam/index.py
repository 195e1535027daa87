"""The evaluation n-gram index: a Bloom filter in memory in front of an exact set sharded by the hashes' top byte.

Building holds one batch and one partition at a time (the rest spilled to local files), so 100 M n-grams build and
load in bounded memory; looking up reads only the partitions the filter lets through. Each entry is (hash, set),
so an overlap is attributed to every evaluation set holding that n-gram. Files are `.npy`/`.npz` read without
unpickling.
"""

from __future__ import annotations

import io
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pretrain_core import storage
from pretrain_core.decontam.bloom import BloomFilter

PARTITIONS = 256
INDEX_FILE = "index.json"
BLOOM_FILE = "bloom.npy"
_SHIFT = np.uint64(56)
_SPILL_ENTRIES = 1 << 22  # (hash, set) pairs buffered before they go to the spill files: 40 MiB
_CACHE_BYTES = 256 * 2**20  # exact partitions kept loaded in a worker


def _partition_url(index_dir: str, part: int) -> str:
    return storage.join(index_dir, f"part-{part:03d}.npz")


class IndexWriter:
    """Collects (n-gram hash, set) pairs in bounded memory; `finish` writes the sorted partitions and the filter."""

    def __init__(self, sets: list[str], spill_entries: int = _SPILL_ENTRIES) -> None:
        self.sets = sets
        self.spill_entries = spill_entries
        self._spill = tempfile.TemporaryDirectory(prefix="decontam-index-")
        self._hashes: list[np.ndarray] = []
        self._set_ids: list[np.ndarray] = []
        self._buffered = 0

    def add(self, set_name: str, hashes: np.ndarray) -> None:
        self._hashes.append(np.asarray(hashes, dtype=np.uint64))
        self._set_ids.append(np.full(hashes.size, self.sets.index(set_name), dtype=np.uint16))
        self._buffered += hashes.size
        if self._buffered >= self.spill_entries:
            self._flush()

    def _flush(self) -> None:
        if not self._buffered:
            return
        hashes, set_ids = np.concatenate(self._hashes), np.concatenate(self._set_ids)
        parts = (hashes >> _SHIFT).astype(np.int64)
        order = np.argsort(parts, kind="stable")
        bounds = np.searchsorted(parts[order], np.arange(PARTITIONS + 1))
        for part in np.unique(parts):
            rows = order[bounds[part] : bounds[part + 1]]
            with open(self._file(int(part), "h"), "ab") as out:
                out.write(hashes[rows].tobytes())
            with open(self._file(int(part), "s"), "ab") as out:
                out.write(set_ids[rows].tobytes())
        self._hashes, self._set_ids, self._buffered = [], [], 0

    def _file(self, part: int, kind: str) -> str:
        return os.path.join(self._spill.name, f"{part:03d}.{kind}")

    def _partitions(self) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        """Each non-empty partition's unique (hash, set) pairs, sorted by hash then set."""
        for part in range(PARTITIONS):
            if not os.path.exists(self._file(part, "h")):
                continue
            hashes = np.fromfile(self._file(part, "h"), dtype=np.uint64)
            set_ids = np.fromfile(self._file(part, "s"), dtype=np.uint16)
            order = np.lexsort((set_ids, hashes))
            hashes, set_ids = hashes[order], set_ids[order]
            keep = np.ones(hashes.size, dtype=np.bool_)
            keep[1:] = (hashes[1:] != hashes[:-1]) | (set_ids[1:] != set_ids[:-1])
            yield part, hashes[keep], set_ids[keep]

    def finish(
        self, index_dir: str, false_positive_rate: float, max_filter_bytes: int, extra: dict[str, Any]
    ) -> dict[str, Any]:
        """Write the partitions, then the filter sized for the distinct n-grams, then `index.json` (with
        ``extra``), which it returns."""
        self._flush()
        distinct = 0
        per_set = np.zeros(len(self.sets), dtype=np.int64)
        written = []
        for part, hashes, set_ids in self._partitions():
            buffer = io.BytesIO()
            np.savez(buffer, hashes=hashes, sets=set_ids)
            storage.write_bytes(_partition_url(index_dir, part), buffer.getvalue())
            written.append(part)
            distinct += int(np.count_nonzero(np.concatenate(([True], hashes[1:] != hashes[:-1])))) if hashes.size else 0
            per_set += np.bincount(set_ids, minlength=len(self.sets))
        bloom = BloomFilter.sized(distinct, false_positive_rate, max_filter_bytes)
        for _, hashes, _ in self._partitions():
            bloom.add(np.unique(hashes))
        with storage.atomic_open(storage.join(index_dir, BLOOM_FILE)) as handle:  # streamed: no second copy
            np.save(handle, bloom.words, allow_pickle=False)
        self._spill.cleanup()
        info = {
            "sets": self.sets,
            "ngrams_per_set": dict(zip(self.sets, per_set.tolist(), strict=True)),
            "distinct_ngrams": distinct,
            "partitions": written,
            "filter_bytes": bloom.words.nbytes,
            "filter_probes": bloom.probes,
            "filter_false_positive_rate": bloom.expected_rate(distinct),
            **extra,
        }
        storage.write_json(storage.join(index_dir, INDEX_FILE), info)
        return info


@dataclass
class Matches:
    """N-gram positions (into the looked-up hashes) found in the index, each with one set holding it."""

    positions: np.ndarray
    set_ids: np.ndarray


@dataclass
class NgramIndex:
    """A written index, loaded lazily where it is used (a worker loads the filter once, partitions as needed)."""

    index_dir: str
    info: dict[str, Any]
    _bloom: BloomFilter | None = field(default=None, repr=False)
    _cache: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict, repr=False)

    @staticmethod
    def open(index_dir: str) -> NgramIndex:
        return NgramIndex(index_dir, storage.read_json(storage.join(index_dir, INDEX_FILE)))

    def __getstate__(self) -> dict[str, Any]:
        return {"index_dir": self.index_dir, "info": self.info, "_bloom": None, "_cache": {}}

    @property
    def sets(self) -> list[str]:
        return list(self.info["sets"])

    def bloom(self) -> BloomFilter:
        if self._bloom is None:
            fs, path = storage.filesystem(storage.join(self.index_dir, BLOOM_FILE))
            with fs.open(path, "rb") as handle:  # read into the array: no second copy
                words = np.load(handle, allow_pickle=False)
            self._bloom = BloomFilter(words, int(self.info["filter_probes"]))
        return self._bloom

    def _partition(self, part: int) -> tuple[np.ndarray, np.ndarray]:
        if part not in self._cache:
            if sum(h.nbytes + s.nbytes for h, s in self._cache.values()) > _CACHE_BYTES:
                self._cache.clear()
            data = io.BytesIO(storage.read_bytes(_partition_url(self.index_dir, part)))
            with np.load(data, allow_pickle=False) as arrays:
                self._cache[part] = (arrays["hashes"], arrays["sets"])
        return self._cache[part]

    def lookup(self, hashes: np.ndarray) -> Matches:
        """Every (position, set) whose n-gram the index holds, by position."""
        if not self.info["distinct_ngrams"] or not hashes.size:
            return Matches(np.empty(0, np.int64), np.empty(0, np.uint16))
        candidates = np.flatnonzero(self.bloom().might_contain(hashes))
        parts = (hashes[candidates] >> _SHIFT).astype(np.int64)
        positions, set_ids = [], []
        stored = set(self.info["partitions"])
        for part in np.unique(parts):
            if int(part) not in stored:
                continue
            rows = candidates[parts == part]
            known, known_sets = self._partition(int(part))
            lows = np.searchsorted(known, hashes[rows], side="left")
            highs = np.searchsorted(known, hashes[rows], side="right")
            counts = highs - lows
            found = np.repeat(rows, counts)
            starts = np.repeat(lows - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum()))
            positions.append(found)
            set_ids.append(known_sets[starts])
        if not positions:
            return Matches(np.empty(0, np.int64), np.empty(0, np.uint16))
        position, set_id = np.concatenate(positions), np.concatenate(set_ids)
        order = np.argsort(position, kind="stable")
        return Matches(position[order], set_id[order])
