"""MinHash signatures for many documents in one vectorised pass, and their LSH buckets by banding in numpy.

The signatures are bit-identical to datasketch's ``MinHash(num_perm, seed, scheme="affine32")`` updated with the
low 32 bits of our shingle hashes (same permutations, same MurmurHash3 pre-mix): we only replace its per-shingle
Python loop and SHA-1 with a compiled loop over shingles and permutations (`kernels.minhash`), so the result plugs into
datasketch's ``LeanMinHash`` and ``MinHashLSH`` unchanged. The buckets are the ones datasketch's ``MinHashLSH``
makes with the same bands and rows (documents whose signatures agree on a whole band), grouped by sorting each
band's rows instead of a Python dictionary per band: about 8 bytes per document and band instead of several
hundred bytes per document.
"""

from __future__ import annotations

import functools

import numpy as np
from datasketch import LeanMinHash, MinHash, MinHashLSH

from pretrain_core.dedup import kernels
from pretrain_core.dedup.candidates import buckets_from_keys
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


def lean_minhash(signature: np.ndarray, seed: int) -> LeanMinHash:
    """A datasketch sketch over one of our signatures (for its LSH, or to compare with its own MinHash)."""
    return LeanMinHash(seed=seed, hashvalues=signature, scheme=SCHEME)


def lsh_buckets(
    signatures: np.ndarray,
    docs: np.ndarray,
    threshold: float,
    false_negative_weight: float,
    params: tuple[int, int] | None,
) -> tuple[list[np.ndarray], tuple[int, int]]:
    """Groups of ``docs`` sharing at least one LSH band, and the (bands, rows) used.

    Without ``params`` the bands and rows are datasketch's: those minimising the weighted sum of false positives
    and false negatives at ``threshold``. A band's values are compared whole (as bytes), as datasketch's hash
    tables key them, so the groups are exactly its buckets.
    """
    num_perm = signatures.shape[1]
    bands, rows = params or lsh_params(threshold, num_perm, false_negative_weight)
    buckets: list[np.ndarray] = []
    band_bytes = np.dtype((np.void, signatures.dtype.itemsize * rows))
    for band in range(bands):
        values = np.ascontiguousarray(signatures[docs, band * rows : (band + 1) * rows])
        _, keys = np.unique(values.view(band_bytes).ravel(), return_inverse=True)
        buckets += buckets_from_keys(keys.ravel(), docs)
    return buckets, (bands, rows)


@functools.cache
def lsh_params(threshold: float, num_perm: int, false_negative_weight: float) -> tuple[int, int]:
    """datasketch's best (bands, rows) for this setting: a search over numeric integrals, so done once."""
    weights = (1.0 - false_negative_weight, false_negative_weight)
    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm, weights=weights)
    return lsh.b, lsh.r


def estimated_jaccard(signatures: np.ndarray, doc: int, others: np.ndarray) -> np.ndarray:
    """MinHash estimate of the Jaccard similarity: the share of permutations whose minima agree."""
    return np.asarray((signatures[others] == signatures[doc]).mean(axis=1), dtype=np.float64)
