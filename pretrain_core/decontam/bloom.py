"""A Bloom filter over 64-bit hashes: the index's first check, in memory bounded by its size.

Its size is a power of two of bits (so a position is a mask, not a division), sized for the n-grams it holds and
the false-positive rate wanted, and capped: past the cap the rate rises, and the exact check behind it sees more.
Positions are double hashing of the hash and a remix of it (Kirsch and Mitzenmacher).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np

from pretrain_core.dedup import kernels

_REMIX = np.uint64(0xD6E8FEB86659FD93)


@dataclass(frozen=True)
class BloomFilter:
    words: np.ndarray  # uint64 bit words; len(words) * 64 is a power of two
    probes: int

    @staticmethod
    def sized(items: int, false_positive_rate: float, max_bytes: int) -> BloomFilter:
        """An empty filter for ``items`` at ``false_positive_rate``, no larger than ``max_bytes``."""
        wanted_bits = max(items, 1) * math.log(1 / false_positive_rate) / math.log(2) ** 2
        bits = 1 << max(9, math.ceil(math.log2(wanted_bits)))
        bits = min(bits, 1 << int(math.log2(max_bytes * 8)))
        probes = min(max(round(bits / max(items, 1) * math.log(2)), 1), 24)
        return BloomFilter(np.zeros(bits // 64, dtype=np.uint64), probes)

    @property
    def bits(self) -> int:
        return self.words.size * 64

    def expected_rate(self, items: int) -> float:
        """The false-positive rate with ``items`` added."""
        return float((1 - math.exp(-self.probes * items / self.bits)) ** self.probes)

    def add(self, hashes: np.ndarray) -> None:
        _add(self.words, np.ascontiguousarray(hashes, dtype=np.uint64), self.probes)

    def might_contain(self, hashes: np.ndarray) -> np.ndarray:
        """False where a hash is surely absent; True where it may be present."""
        out = np.empty(hashes.size, dtype=np.bool_)
        _query(self.words, np.ascontiguousarray(hashes, dtype=np.uint64), self.probes, out)
        return out


@numba.njit(cache=True, nogil=True)
def _add(words, hashes, probes):  # pragma: no cover
    mask = np.uint64(words.size * 64 - 1)
    for value in hashes:
        step = kernels._fmix64(value ^ _REMIX) | np.uint64(1)
        position = value
        for _ in range(probes):
            bit = position & mask
            words[bit >> np.uint64(6)] |= np.uint64(1) << (bit & np.uint64(63))
            position += step


@numba.njit(cache=True, nogil=True)
def _query(words, hashes, probes, out):  # pragma: no cover
    mask = np.uint64(words.size * 64 - 1)
    for i in range(hashes.size):
        value = hashes[i]
        step = kernels._fmix64(value ^ _REMIX) | np.uint64(1)
        position = value
        found = True
        for _ in range(probes):
            bit = position & mask
            if not (words[bit >> np.uint64(6)] >> (bit & np.uint64(63))) & np.uint64(1):
                found = False
                break
            position += step
        out[i] = found
