"""Laying out stage-report figures: ours first with the verdict against the bar, baselines right after."""

from __future__ import annotations

from pathlib import Path

import pytest

from pretrain_eval.stage_quality.figures import OURS, Bar, Figure
from pretrain_eval.stage_quality.report import evaluate_part, misses, render_markdown, render_text

FIGURES = [
    Figure("dedup", "jaccard>=0.8", "datasketch MinHashLSH", "f1", 0.91, support=400),
    Figure("dedup", "jaccard>=0.7", OURS, "f1", 0.95, Bar(">=", 0.93), support=400),
    Figure("dedup", "jaccard>=0.8", OURS, "f1", 0.965, Bar(">=", 0.97), support=400),
    Figure("pii", "decoys", OURS, "false_positive_rate", 0.004, Bar("<=", 0.01), support=250),
    Figure("dedup", "all", OURS, "largest_cluster", 7.0),
]


def test_each_baseline_row_follows_our_row_for_the_same_slice() -> None:
    lines = render_text(FIGURES).splitlines()
    assert lines[0].split()[:5] == ["stage", "metric", "group", "system", "value"]
    rows = [line.split() for line in lines[1:]]
    assert [(r[2], r[3]) for r in rows[:3]] == [
        ("jaccard>=0.8", "pretrain"),
        ("jaccard>=0.8", "datasketch"),
        ("jaccard>=0.7", "pretrain"),
    ]
    assert rows[0][-2:] == ["MISS", "400"] and rows[2][-2:] == ["ok", "400"]
    assert rows[-1][:5] == ["dedup", "largest_cluster", "all", "pretrain", "7"]  # counts print as integers


def test_misses_are_our_figures_below_their_bar_only() -> None:
    assert misses(FIGURES) == [FIGURES[2]]
    assert Bar("<=", 0.01).met_by(0.01) and not Bar("<=", 0.01).met_by(0.011)


def test_markdown_has_one_row_per_figure() -> None:
    table = render_markdown(FIGURES).splitlines()
    assert len(table) == 2 + len(FIGURES)
    assert table[2].startswith("| dedup | f1 | jaccard>=0.8 | pretrain | 0.9650 | >= 0.97 | MISS | 400 |")


def test_an_unknown_part_is_refused_with_the_choices(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="dedup, pii"):
        evaluate_part("spelling", tmp_path)
