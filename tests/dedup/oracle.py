"""The in-memory clustering the partitioned reduce must equal: every distinct text of the corpus in one process,
bucketed, paired, verified, linked by union-find and guarded (what the dedup fit did before it was partitioned)."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pretrain_core.dedup.candidates import candidate_pairs
from pretrain_core.dedup.cluster import Similarity, split_loose_clusters, union_find_roots
from pretrain_core.dedup.config import DedupConfig
from pretrain_core.dedup.minhash import estimated_jaccard, lsh_buckets
from pretrain_core.dedup.near import Sketches
from pretrain_core.dedup.shingles import ShingleSets
from pretrain_core.dedup.simhash import hamming_similarity, simhash_buckets


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
