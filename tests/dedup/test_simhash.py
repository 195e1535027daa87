from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np

from pretrain_core.dedup.normalize import normalize_texts
from pretrain_core.dedup.shingles import shingle_sets
from pretrain_core.dedup.simhash import band_ranges, hamming_similarity, simhash_fingerprints
from tests.dedup.oracle import simhash_buckets


def _fingerprints(texts: list[str], bits: int = 64) -> np.ndarray:
    return simhash_fingerprints(shingle_sets(normalize_texts(texts), "auto", 5, 5, 0.3), bits)


def _distance(a: np.ndarray, b: np.ndarray) -> int:
    return int(np.bitwise_count(a ^ b))


def test_near_identical_texts_are_few_bits_apart_and_unrelated_ones_many(
    licence: Callable[[str], str], edit_words: Callable[..., str]
) -> None:
    gpl3, apache = licence("GPL-3"), licence("Apache-2.0")
    texts = [gpl3, gpl3.upper(), edit_words(gpl3, 0.001, donor=apache), apache, licence("MPL-1.1")]
    fp = _fingerprints(texts)
    assert fp.dtype == np.uint64 and fp[0] == fp[1]
    assert _distance(fp[0], fp[2]) <= 3
    assert _distance(fp[0], fp[3]) > 12 and _distance(fp[3], fp[4]) > 12
    similarity = hamming_similarity(fp, 0, np.array([1, 2, 3]), bits=64)
    assert similarity[0] == 1.0 and similarity[1] >= 1 - 3 / 64 and similarity[2] < 0.82


def test_narrow_fingerprints_fit_their_width(licence: Callable[[str], str]) -> None:
    fp = _fingerprints([licence("GPL-2"), licence("BSD")], bits=32)
    assert (fp < (1 << 32)).all() and fp[0] != fp[1]


def test_band_ranges_tile_the_fingerprint() -> None:
    assert band_ranges(64, 3) == [(0, 16), (16, 32), (32, 48), (48, 64)]
    ranges = band_ranges(32, 5)
    assert len(ranges) == 6 and ranges[0][0] == 0 and ranges[-1][1] == 32
    assert all(hi == lo for (_, hi), (lo, _) in itertools.pairwise(ranges))


def test_banded_lookup_finds_every_pair_within_the_distance() -> None:
    rng = np.random.default_rng(0)
    originals = rng.integers(0, 2**63, size=200, dtype=np.uint64)
    flips = np.zeros(200, dtype=np.uint64)
    for k in range(200):
        for bit in rng.choice(64, size=k % 4, replace=False):
            flips[k] |= np.uint64(1) << np.uint64(bit)
    fingerprints = np.concatenate((originals, originals ^ flips))
    buckets = simhash_buckets(fingerprints, np.arange(400), bits=64, max_hamming=3)
    together = {(int(a), int(b)) for bucket in buckets for a in bucket for b in bucket if a < b}
    assert all((k, k + 200) in together for k in range(200))
    assert len(together) < 250  # random fingerprints rarely share a 16-bit band
