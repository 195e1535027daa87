"""Seeded, order-independent sampling by hash: the same seed and documents give the same sample, however the
input is sharded or ordered, and memory stays bounded by the sample itself while streaming a large corpus."""

from __future__ import annotations

import hashlib
import heapq
from typing import Generic, TypeVar

T = TypeVar("T")


def seeded_hash(seed: int, purpose: str, key: str) -> int:
    """A 64-bit hash of ``key`` under ``seed``; ``purpose`` keeps different samples independent."""
    digest = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8, person=purpose.encode()[:16])
    digest.update(seed.to_bytes(8, "little"))
    return int.from_bytes(digest.digest(), "little")


def fold_of(seed: int, doc_id: str) -> int:
    """The cross-fitting fold (0 or 1) of a document, the same in the fit and in every shard."""
    return seeded_hash(seed, "quality-fold", doc_id) & 1


class HashSample(Generic[T]):
    """The items with the smallest hashes whose weights first add up to ``limit`` (all items if they never do).

    With unit weights this is a bottom-k sample of k = ``limit`` items; with text lengths as weights it is a
    character budget filled in hash order.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        # (-hash, tie-break key, arrival, weight, item): the largest hash on top; never compares items
        self._heap: list[tuple[int, str, int, int, T]] = []
        self._total = 0
        self._arrivals = 0

    def wants(self, hash_: int) -> bool:
        """Whether an item with this hash would enter the sample (cheap to ask before building the item)."""
        return self._total < self.limit or hash_ < -self._heap[0][0]

    def offer(self, hash_: int, key: str, weight: int, item: T) -> None:
        if not self.wants(hash_):
            return
        heapq.heappush(self._heap, (-hash_, key, self._arrivals, weight, item))
        self._arrivals += 1
        self._total += weight
        while self._total - self._heap[0][3] >= self.limit:
            self._total -= heapq.heappop(self._heap)[3]

    def items(self) -> list[T]:
        """The sample in hash order."""
        return [entry[4] for entry in sorted(self._heap, key=lambda e: (-e[0], e[1], e[2]))]

    def __len__(self) -> int:
        return len(self._heap)
