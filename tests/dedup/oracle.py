"""The in-memory clustering the partitioned reduce must equal: every distinct text of the corpus in one process,
bucketed, paired, verified, linked by union-find and guarded (what the dedup fit did before it was partitioned)."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from datasketch import LeanMinHash

from pretrain_core.dedup.candidates import candidate_pairs
from pretrain_core.dedup.cluster import Similarity, split_loose_clusters, union_find_roots
from pretrain_core.dedup.config import DedupConfig
from pretrain_core.dedup.minhash import SCHEME, estimated_jaccard, lsh_params
from pretrain_core.dedup.near import Sketches
from pretrain_core.dedup.shingles import ShingleSets
from pretrain_core.dedup.simhash import band_ranges, hamming_similarity


@dataclass(frozen=True)
class NearDuplicates:
    """Each text's cluster representative (``roots[i]``, itself when unique) and how the clusters came about."""

    roots: np.ndarray
    candidate_pairs: int
    verified_pairs: int
    guard_splits: int
    below_threshold: int  # members less similar than the threshold to their representative (by `verify_with`)
    lsh_bands: int
    lsh_rows: int


def near_duplicate_roots(
    sketches: Sketches,
    rank: np.ndarray,
    groups: np.ndarray,
    cfg: DedupConfig,
    load_sets: Callable[[np.ndarray], ShingleSets] | None = None,
) -> NearDuplicates:
    """Cluster texts whose similarity reaches the threshold; only texts of the same ``groups`` value are compared.

    ``rank`` orders texts by preference (lowest is kept); every cluster's root is its best-ranked member. For exact
    Jaccard, sketches made without their shingle sets get them from ``load_sets`` (the sets of the given sorted
    texts, in that order), called once for the texts of the candidate pairs: only those are ever compared.
    """
    buckets: list[np.ndarray] = []
    bands, rows = 0, 0
    eligible = np.flatnonzero(sketches.sizes > 0)
    for group in np.unique(groups[eligible]).tolist():
        members = eligible[groups[eligible] == group]
        if cfg.method == "minhash":
            found, (bands, rows) = lsh_buckets(
                sketches.sketch, members, cfg.threshold, cfg.lsh_false_negative_weight, cfg.lsh_params
            )
        else:
            found = simhash_buckets(sketches.sketch, members, cfg.simhash_bits, cfg.simhash_max_hamming)
            bands, rows = cfg.simhash_max_hamming + 1, 0
        buckets.extend(found)
    pairs = candidate_pairs(buckets, rank, cfg.full_pairs_limit)
    similarity = _similarity(sketches, cfg, np.unique(pairs), load_sets)
    verified = _verify(pairs, similarity, cfg.similarity_threshold) if cfg.verify_candidates else pairs
    roots = union_find_roots(len(sketches), verified, rank)
    roots, splits = split_loose_clusters(roots, rank, similarity, cfg.similarity_threshold - cfg.guard_margin)
    below = _below_threshold(roots, similarity, cfg.similarity_threshold)
    return NearDuplicates(roots, len(pairs), len(verified), splits, below, bands, rows)


def _below_threshold(roots: np.ndarray, similarity: Similarity, threshold: float) -> int:
    """How many clustered texts are less than ``threshold`` similar to their representative."""
    below = 0
    members = np.flatnonzero(roots != np.arange(len(roots)))
    for root in np.unique(roots[members]).tolist():
        below += int(np.count_nonzero(similarity(root, members[roots[members] == root]) < threshold))
    return below


def _similarity(
    sketches: Sketches, cfg: DedupConfig, compared: np.ndarray, load_sets: Callable[[np.ndarray], ShingleSets] | None
) -> Similarity:
    if cfg.verify_with == "jaccard":
        if sketches.sets is not None:
            return sketches.sets.jaccard
        if load_sets is None:
            raise ValueError("exact Jaccard verification needs the shingle sets; sketch with verify_with='jaccard'")
        return functools.partial(_jaccard_among, load_sets(compared), compared)
    if cfg.method == "minhash":
        return functools.partial(estimated_jaccard, sketches.sketch)
    return functools.partial(_hamming, sketches.sketch, cfg.simhash_bits)


def _jaccard_among(sets: ShingleSets, texts: np.ndarray, doc: int, others: np.ndarray) -> np.ndarray:
    """Exact Jaccard of texts given by global index, over `sets` that hold the sorted `texts` only."""
    return sets.jaccard(int(np.searchsorted(texts, doc)), np.searchsorted(texts, others))


def _hamming(fingerprints: np.ndarray, bits: int, doc: int, others: np.ndarray) -> np.ndarray:
    return hamming_similarity(fingerprints, doc, others, bits)


def _verify(pairs: np.ndarray, similarity: Similarity, threshold: float) -> np.ndarray:
    """The pairs whose similarity reaches ``threshold``, checked one left-hand document at a time."""
    if len(pairs) == 0:
        return pairs
    keep = np.zeros(len(pairs), dtype=bool)
    bounds = np.flatnonzero(np.concatenate(([True], pairs[1:, 0] != pairs[:-1, 0], [True])))
    for lo, hi in itertools.pairwise(bounds.tolist()):
        keep[lo:hi] = similarity(int(pairs[lo, 0]), pairs[lo:hi, 1]) >= threshold
    return pairs[keep]


# Banding in one process, the plain form of the reduce's `candidates` round: datasketch's buckets exactly.


def buckets_from_keys(keys: np.ndarray, docs: np.ndarray) -> list[np.ndarray]:
    """Groups of ``docs`` with equal ``keys`` (groups of one are dropped), each sorted by document index."""
    order = np.lexsort((docs, keys))
    keys, docs = keys[order], docs[order]
    bounds = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1], [True])))
    return [docs[lo:hi] for lo, hi in itertools.pairwise(bounds) if hi - lo > 1]


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


def simhash_buckets(fingerprints: np.ndarray, docs: np.ndarray, bits: int, max_hamming: int) -> list[np.ndarray]:
    """Groups of ``docs`` whose fingerprints agree on a whole band."""
    buckets: list[np.ndarray] = []
    for lo, hi in band_ranges(bits, max_hamming):
        keys = (fingerprints[docs] >> np.uint64(lo)) & np.uint64((1 << (hi - lo)) - 1)
        buckets.extend(buckets_from_keys(keys, docs))
    return buckets
