"""The combined quality score and its buckets.

Two judgements meet here. Perplexity under the reference models says how familiar the text is; its place between
its language's CCNet cut-offs, in log space (`perplexity_positions`: 0 at the head/middle cut-off, 1 at the
middle/tail one), puts every language and model on one scale. The shipped classifier's log-odds say how much the
document's signals look like curated text. The score is

    quality_score = sigmoid(classifier_logit + perplexity_weight * (1 - position))

so a document on the middle/tail cut-off scores what the classifier says and each cut-off width of lower
perplexity adds `perplexity_weight` to its log-odds; in the groups of `quality.cap_familiarity` (prose by
default) no more than one width counts: beyond the head/middle cut-off familiarity stops counting. With the
classifier off (logit 0) and no cap the score ranks exactly as perplexity does. Buckets are fixed score
thresholds, config that needs no refit: `tail` below the first, `head` from the second, `middle` between.
"""

from __future__ import annotations

import numpy as np

from pretrain_core.quality.config import BUCKETS


def perplexity_positions(perplexity: np.ndarray, low: float, high: float) -> np.ndarray:
    """Where each perplexity lies between the two cut-offs, in log space: 0 at `low`, 1 at `high`."""
    spread = max(float(np.log(high) - np.log(low)), 1e-6)
    return (np.log(np.maximum(perplexity.astype(np.float64), 1e-12)) - np.log(low)) / spread


def combined_scores(
    classifier_logits: np.ndarray, positions: np.ndarray, perplexity_weight: float, capped: np.ndarray | None = None
) -> np.ndarray:
    """Where `capped`, positions below 0 (more familiar than the head/middle cut-off) count as 0: in prose,
    familiarity beyond that is no further evidence of quality (monotone, templated and word-list text is the most
    predictable of all)."""
    if capped is not None:
        positions = np.where(capped, np.maximum(positions, 0.0), positions)
    log_odds = classifier_logits + perplexity_weight * (1.0 - positions)
    return 1.0 / (1.0 + np.exp(-np.clip(log_odds, -50.0, 50.0)))


def score_buckets(scores: np.ndarray, cutoffs: tuple[float, float]) -> np.ndarray:
    """`tail` below the first cut-off, `head` at or above the second, `middle` between."""
    tail, head = cutoffs
    return np.where(scores >= head, BUCKETS[0], np.where(scores >= tail, BUCKETS[1], BUCKETS[2]))
