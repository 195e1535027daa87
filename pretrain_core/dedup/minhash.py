"""MinHash signatures for many documents in one vectorised pass, and datasketch's choice of LSH bands and rows.

The signatures are bit-identical to datasketch's ``MinHash(num_perm, seed, scheme="affine32")`` updated with the
low 32 bits of our shingle hashes (same permutations, same MurmurHash3 pre-mix): we only replace its per-shingle
Python loop and SHA-1 with a compiled loop over shingles and permutations (`kernels.minhash`), so the result plugs into
datasketch's ``LeanMinHash`` and ``MinHashLSH`` unchanged. The dedup reduce bands them (`partitioned.py`).
"""

from __future__ import annotations

import functools

import numpy as np
from datasketch import MinHash, MinHashLSH

from pretrain_core.dedup import kernels
from pretrain_core.dedup.shingles import ShingleSets

SCHEME = "affine32"
_MAX_HASH = np.uint32(0xFFFFFFFF)


@functools.cache
def permutations(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """datasketch's affine permutations ``a * h + b mod 2**32`` for this seed (``a`` odd, so a bijection)."""
    a, b = MinHash(num_perm=num_perm, seed=seed, scheme=SCHEME).permutations
    return a.astype(np.uint32), b.astype(np.uint32)


def minhash_signatures(sets: ShingleSets, num_perm: int, seed: int) -> np.ndarray:
    """One ``num_perm``-wide uint32 signature per document; a document without shingles keeps all-ones."""
    a, b = permutations(num_perm, seed)
    signatures = np.full((len(sets), num_perm), _MAX_HASH, dtype=np.uint32)
    kernels.minhash(sets.hashes, sets.offsets, a, b, signatures)
    return signatures


@functools.cache
def lsh_params(threshold: float, num_perm: int, false_negative_weight: float) -> tuple[int, int]:
    """datasketch's best (bands, rows) for this setting: a search over numeric integrals, so done once."""
    weights = (1.0 - false_negative_weight, false_negative_weight)
    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm, weights=weights)
    return lsh.b, lsh.r


def estimated_jaccard(signatures: np.ndarray, doc: int, others: np.ndarray) -> np.ndarray:
    """MinHash estimate of the Jaccard similarity: the share of permutations whose minima agree."""
    return np.asarray((signatures[others] == signatures[doc]).mean(axis=1), dtype=np.float64)
