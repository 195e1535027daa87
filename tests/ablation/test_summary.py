from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest
from scipy import stats

from pretrain_core.ablation.summary import (
    RESULTS_SCHEMA,
    arm_figures,
    compare,
    final_rows,
    render_curves,
    render_markdown,
)


def results(values: dict[str, list[float]], steps: tuple[int, ...] = (10, 20)) -> pa.Table:
    """bits per byte of each arm's seeds, the given values at the last step and 1.0 higher at earlier ones."""
    rows = [
        {"arm": arm, "seed": seed, "step": step, "tokens_seen": step * 100, "metric": "bits_per_byte", "group": "all",
         "value": value + (0.0 if step == steps[-1] else 1.0), "stderr": None}
        for arm, seen in values.items()
        for seed, value in enumerate(seen)
        for step in steps
    ]  # fmt: skip
    return pa.Table.from_pylist(rows, schema=RESULTS_SCHEMA)


def test_figures_are_the_last_step_mean_spread_and_t_interval_over_seeds() -> None:
    table = results({"raw": [3.10, 3.20, 3.15], "curated": [3.00, 3.02, 3.01]})
    assert {row["step"] for row in final_rows(table)} == {20}
    by_arm = {f.arm: f for f in arm_figures(table)}
    raw = by_arm["raw"]
    assert (
        raw.seeds == 3
        and raw.mean == pytest.approx(3.15)
        and raw.std == pytest.approx(np.std([3.1, 3.2, 3.15], ddof=1))
    )
    expected = stats.t.ppf(0.975, 2) * raw.std / math.sqrt(3)
    assert raw.half_width == pytest.approx(expected)


def test_a_clear_difference_is_a_verdict_and_noise_is_not() -> None:
    clear = compare(arm_figures(results({"raw": [3.10, 3.20, 3.15], "curated": [3.00, 3.02, 3.01]})), "raw")
    [curated] = clear
    welch = stats.ttest_ind([3.00, 3.02, 3.01], [3.10, 3.20, 3.15], equal_var=False)
    interval = welch.confidence_interval(0.95)
    assert curated.difference == pytest.approx(-0.14)
    assert curated.half_width == pytest.approx((interval.high - interval.low) / 2)
    assert curated.better is True
    assert curated.verdict().startswith("curated beats raw on bits per byte (all) by 0.1400 ±")
    noisy = compare(arm_figures(results({"raw": [3.0, 3.4, 3.2], "curated": [3.1, 3.3, 3.15]})), "raw")
    assert noisy[0].better is None and "not told apart" in noisy[0].verdict()
    worse = compare(arm_figures(results({"raw": [3.00, 3.02, 3.01], "curated": [3.10, 3.20, 3.15]})), "raw")
    assert worse[0].better is False and "trails" in worse[0].verdict()
    constant = compare(arm_figures(results({"raw": [3.0, 3.0], "curated": [3.0, 3.0]})), "raw")
    assert constant[0].half_width == 0.0 and "difference +0.0000 ± 0.0000" in constant[0].verdict()
    single = compare(arm_figures(results({"raw": [3.0], "curated": [2.0]})), "raw")
    assert single[0].half_width is None and single[0].better is None and "one seed" in single[0].verdict()


def test_accuracy_is_better_when_higher() -> None:
    rows = [
        {"arm": arm, "seed": s, "step": 5, "tokens_seen": 500, "metric": "accuracy", "group": "continuation/all",
         "value": v, "stderr": 0.05}
        for arm, values in {"raw": [0.30, 0.31, 0.29], "curated": [0.40, 0.41, 0.42]}.items()
        for s, v in enumerate(values)
    ]  # fmt: skip
    [curated] = compare(arm_figures(pa.Table.from_pylist(rows, schema=RESULTS_SCHEMA)), "raw")
    assert curated.difference == pytest.approx(0.11) and curated.better is True


def test_the_report_has_verdicts_tables_and_the_curves() -> None:
    table = results({"raw": [3.10, 3.20, 3.15], "curated": [3.00, 3.02, 3.01]})
    figures = arm_figures(table)
    markdown = render_markdown(
        "demo", {"raw": "no filters", "curated": "defaults"}, "raw", figures, compare(figures, "raw"), "curves.png",
        {"seeds per arm": 3},
    )  # fmt: skip
    assert "# Ablation `demo`" in markdown and "- **raw** (baseline): no filters" in markdown
    assert "## Verdicts" in markdown and "- curated beats raw on bits per byte (all)" in markdown
    assert "| all | curated | 3 | 3.0100 |" in markdown and "![bits per byte against tokens](curves.png)" in markdown
    assert render_curves(table).startswith(b"\x89PNG")
