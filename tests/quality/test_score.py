"""The combined score: perplexity's place between its cut-offs, the classifier's log-odds, fixed bucket thresholds."""

from __future__ import annotations

import numpy as np

from pretrain_core.quality.score import combined_scores, perplexity_positions, score_buckets


def test_positions_are_zero_and_one_at_the_cut_offs_in_log_space() -> None:
    positions = perplexity_positions(np.array([10.0, 100.0, np.sqrt(1000.0), 1000.0, 0.0]), 10.0, 1000.0)
    assert np.allclose(positions[:4], [0.0, 0.5, 0.25, 1.0]) and -10 < positions[4] < -5  # zero stays finite


def test_the_score_is_the_classifier_at_the_middle_tail_cut_off_and_rises_with_familiarity() -> None:
    logits = np.array([0.0, 2.0, -2.0])
    at_cut = combined_scores(logits, np.ones(3), perplexity_weight=4.0)
    assert np.allclose(at_cut, 1 / (1 + np.exp(-logits)))
    familiar = combined_scores(logits, np.zeros(3), perplexity_weight=4.0)
    assert (familiar > at_cut).all() and np.allclose(familiar[0], 1 / (1 + np.exp(-4.0)))
    assert np.isfinite(combined_scores(np.array([1e6, -1e6]), np.array([-1e6, 1e6]), 4.0)).all()


def test_buckets_are_fixed_thresholds_head_inclusive() -> None:
    buckets = score_buckets(np.array([0.95, 0.7, 0.69, 0.3, 0.29, 0.0]), (0.3, 0.7))
    assert buckets.tolist() == ["head", "head", "middle", "middle", "tail", "tail"]


def test_a_capped_group_earns_nothing_for_familiarity_beyond_the_head_cut_off() -> None:
    logits, positions = np.zeros(3), np.array([0.0, -3.0, 2.0])
    capped = combined_scores(logits, positions, 4.0, np.array([True, True, True]))
    assert capped[0] == capped[1] > capped[2]  # below the head/middle cut-off: the same as at it
    uncapped = combined_scores(logits, positions, 4.0, np.array([False, False, False]))
    assert uncapped[1] > uncapped[0] and uncapped[2] == capped[2]
