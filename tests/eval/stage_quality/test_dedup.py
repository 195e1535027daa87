"""Dedup against plain MinHashLSH on a slice of the labelled near-duplicate set (data/labelled/dedup)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pretrain_eval.stage_quality.dedup import (
    BASELINE,
    CEILING,
    COMPLETE_ABOVE,
    F1_BARS,
    MEMBER_MARGIN,
    LabelledSet,
    baseline_minhashes,
    baseline_representatives,
    default_dedup_config,
    evaluate,
    load_set,
    our_representatives,
    stage_shingles,
)
from pretrain_eval.stage_quality.figures import OURS, Figure

SET_DIR = str(Path(__file__).resolve().parents[3] / "data" / "labelled" / "dedup")
LIMIT = 120  # groups: about 270 documents, every kind of pair
EDIT_KINDS = {"substitute", "insert", "delete", "reorder", "boilerplate", "format", "mixed"}


@pytest.fixture(scope="module")
def figures() -> dict[tuple[str, str, str], Figure]:
    return {(f.group, f.system, f.metric): f for f in evaluate(SET_DIR, LIMIT)}


@pytest.fixture(scope="module")
def labelled() -> LabelledSet:
    return load_set(SET_DIR, LIMIT)


def test_the_slice_holds_every_kind_of_group(labelled: LabelledSet) -> None:
    kinds = {p.kind for p in labelled.pairs}
    assert EDIT_KINDS | {"chain", "template"} <= kinds
    assert len(set(labelled.groups)) == LIMIT and 200 < len(labelled.ids) < 400
    assert load_set(SET_DIR, LIMIT).ids == labelled.ids  # the same slice every time


def test_labels_are_the_stage_jaccard_and_complete_above_the_floor(labelled: LabelledSet) -> None:
    sets = stage_shingles(labelled.texts, default_dedup_config())
    for pair in labelled.pairs:
        assert sets.overlap(pair.a, pair.b) == (pair.shared, pair.union)
    listed = {(p.a, p.b) for p in labelled.pairs}
    n = len(labelled.ids)
    for doc in range(n - 1):
        others = np.arange(doc + 1, n)
        close = others[sets.jaccard(doc, others) >= COMPLETE_ABOVE]
        assert {(doc, int(other)) for other in close} <= listed


def test_every_figure_is_there_for_both_systems_and_in_range(figures: dict[tuple[str, str, str], Figure]) -> None:
    for threshold in F1_BARS:
        group = f"jaccard>={threshold:g}"
        for system in (OURS, BASELINE):
            for metric in ("precision", "recall", "f1", "worst_member_similarity"):
                assert 0.0 <= figures[group, system, metric].value <= 1.0
            assert figures[group, system, "largest_cluster"].value >= 2
            for kind in EDIT_KINDS | {"chain", "template"}:
                assert (f"{group} {kind}", system, "f1") in figures
        assert (f"{group} chain", CEILING, "f1") in figures
    assert all(f.bar is None for f in figures.values() if f.system != OURS)


def test_ours_meets_the_bars_and_beats_the_baseline(figures: dict[tuple[str, str, str], Figure]) -> None:
    for threshold in F1_BARS:
        group = f"jaccard>={threshold:g}"
        ours, theirs = figures[group, OURS, "f1"], figures[group, BASELINE, "f1"]
        assert ours.meets_bar and ours.value > theirs.value
        worst = figures[group, OURS, "worst_member_similarity"]
        assert worst.meets_bar and worst.bar is not None and worst.bar.value == pytest.approx(threshold - MEMBER_MARGIN)
        # Whitespace and case changes only: exact duplicates after normalisation.
        assert figures[f"{group} format", OURS, "f1"].value == 1.0


def test_no_clustering_scores_chains_perfectly(figures: dict[tuple[str, str, str], Figure]) -> None:
    for threshold in F1_BARS:
        group = f"jaccard>={threshold:g} chain"
        ceiling = figures[group, CEILING, "f1"].value
        assert ceiling < 1.0
        assert figures[group, OURS, "f1"].value <= ceiling and figures[group, BASELINE, "f1"].value <= ceiling


def test_licences_of_one_family_are_kept_apart_unless_close_enough() -> None:
    # LGPL-2 and LGPL-2.1 (Jaccard 0.72), GFDL-1.2 and GFDL-1.3 (0.85): template pairs of the licence source.
    labelled = load_set(SET_DIR, groups={"template-0245", "template-0246"})
    jaccard = {labelled.groups[p.a]: p.jaccard for p in labelled.pairs if p.kind == "template"}
    assert 0.7 <= jaccard["template-0246"] < 0.8 <= jaccard["template-0245"]
    cfg = default_dedup_config()
    for threshold in F1_BARS:
        representatives = our_representatives(labelled, cfg.model_copy(update={"threshold": threshold}))
        for pair in labelled.pairs:
            assert (representatives[pair.a] == representatives[pair.b]) == (pair.jaccard >= threshold)


def test_baseline_joins_unverified_candidates_and_ours_does_not() -> None:
    # Copies edited down to Jaccard 0.43 and 0.47 that plain LSH at 0.7 still returns as candidates.
    labelled = load_set(SET_DIR, groups={"edit-0734", "edit-0988"})
    assert sorted(round(p.jaccard, 2) for p in labelled.pairs) == [0.43, 0.47]
    cfg = default_dedup_config().model_copy(update={"threshold": 0.7})
    sets = stage_shingles(labelled.texts, cfg)
    theirs = baseline_representatives(baseline_minhashes(sets, cfg), np.arange(len(labelled.ids)), cfg)
    ours = our_representatives(labelled, cfg)
    assert all(theirs[p.a] == theirs[p.b] for p in labelled.pairs)
    assert all(ours[p.a] != ours[p.b] for p in labelled.pairs)


def test_removals_are_right_even_in_chains_and_never_below_the_threshold(
    figures: dict[tuple[str, str, str], Figure],
) -> None:
    """Judged by what is removed, a chain has a right answer (remove B for A, keep C) and ours gives it."""
    for threshold in F1_BARS:
        group = f"jaccard>={threshold:g}"
        assert figures[(group, OURS, "removed_below_threshold")].value == 0.0
        assert figures[(group, BASELINE, "removed_below_threshold")].value > 0.0  # plain LSH chains its clusters
        for subset in (group, f"{group} chain"):
            ours, theirs = figures[(subset, OURS, "removal_f1")], figures[(subset, BASELINE, "removal_f1")]
            assert ours.value >= 0.97 and ours.value >= theirs.value and ours.support > 0, subset
