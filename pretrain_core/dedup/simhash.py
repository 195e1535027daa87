"""SimHash fingerprints over weighted shingles, with banded lookup for pairs within a Hamming distance.

SimHash is the cheap option: one 64-bit word per document instead of a 128-wide signature, and exact bucket
lookups. It finds near-identical documents (a few edited words or a changed header); MinHash is the better tool
for looser near-duplicates, since a Hamming radius wide enough for them makes the bands too short to be selective.
"""

from __future__ import annotations

import itertools

import numpy as np

from pretrain_core.dedup.shingles import ShingleSets


def simhash_fingerprints(sets: ShingleSets, bits: int) -> np.ndarray:
    """One ``bits``-bit fingerprint per document (uint64): bit i is set when shingles with hash bit i set
    outweigh those without it, each shingle weighted by its count in the document."""
    shifts = np.arange(bits, dtype=np.uint64)

    def votes(hashes: np.ndarray, counts: np.ndarray) -> np.ndarray:
        bit_set = ((hashes[np.newaxis, :] >> shifts[:, np.newaxis]) & np.uint64(1)).astype(bool)
        return np.where(bit_set, counts[np.newaxis, :], -counts[np.newaxis, :])

    tallies = sets.reduce_per_doc(votes, np.add, np.zeros(bits, dtype=np.int64))
    return np.bitwise_or.reduce((tallies > 0).astype(np.uint64) << shifts, axis=1)


def band_ranges(bits: int, max_hamming: int) -> list[tuple[int, int]]:
    """``max_hamming + 1`` disjoint bit ranges: two fingerprints within the distance agree on at least one
    (pigeonhole), so looking up each band exactly finds every such pair."""
    edges = np.linspace(0, bits, max_hamming + 2).round().astype(int)
    return [(int(lo), int(hi)) for lo, hi in itertools.pairwise(edges)]


def hamming_similarity(fingerprints: np.ndarray, doc: int, others: np.ndarray, bits: int) -> np.ndarray:
    """``1 - hamming / bits``: 1 for equal fingerprints, about 0.5 for unrelated documents."""
    distance = np.bitwise_count(fingerprints[others] ^ fingerprints[doc])
    return 1.0 - distance.astype(np.float64) / bits
