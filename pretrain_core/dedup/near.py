"""Sketches of distinct texts for near-duplicate search: shingle sets, MinHash signatures or SimHash fingerprints."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pretrain_core.dedup.config import DedupConfig
from pretrain_core.dedup.minhash import minhash_signatures
from pretrain_core.dedup.normalize import CodePoints
from pretrain_core.dedup.shingles import ShingleSets, shingle_sets
from pretrain_core.dedup.simhash import simhash_fingerprints


@dataclass(frozen=True)
class Sketches:
    """What near-dedup keeps per distinct text: its shingle count, its sketch (MinHash signature row or SimHash
    fingerprint) and, only when pairs are verified by exact Jaccard, its shingle set."""

    sizes: np.ndarray
    sketch: np.ndarray
    sets: ShingleSets | None

    def __len__(self) -> int:
        return len(self.sizes)

    @staticmethod
    def concat(parts: Sequence[Sketches]) -> Sketches:
        sets = [p.sets for p in parts if p.sets is not None]
        return Sketches(
            sizes=np.concatenate([p.sizes for p in parts]),
            sketch=np.concatenate([p.sketch for p in parts]),
            sets=ShingleSets.concat(sets) if len(sets) == len(parts) else None,
        )


def sketch_texts(normalized: CodePoints, cfg: DedupConfig) -> Sketches:
    """Shingle and sketch normalised texts with the configured method (``minhash`` or ``simhash``)."""
    sets = shingle_sets(normalized, cfg.shingle, cfg.word_ngram, cfg.char_ngram, cfg.min_unspaced_share)
    if cfg.method == "minhash":
        sketch = minhash_signatures(sets, cfg.num_perm, cfg.seed)
    else:
        sketch = simhash_fingerprints(sets, cfg.simhash_bits)
    return Sketches(sets.sizes, sketch, sets if cfg.verify_with == "jaccard" else None)
