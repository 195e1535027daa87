"""What an ablation shows: per arm and metric the mean over seeds with its spread and a 95 % t-interval, each arm's
difference to the baseline with a Welch t-interval, a plain verdict, and the held-out curve of every arm.

With a few seeds per arm, the interval is what matters: a difference whose interval holds 0 is not told apart
from seed noise, however large its mean looks (docs/ablation.md says how many seeds a difference needs).
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np
import pyarrow as pa
from pydantic import BaseModel

from pretrain_core.png_plot import finished_png, line_figure

RESULTS_SCHEMA = pa.schema(
    [
        pa.field("arm", pa.string(), nullable=False),
        pa.field("seed", pa.int64(), nullable=False),
        pa.field("step", pa.int64(), nullable=False),
        pa.field("tokens_seen", pa.int64(), nullable=False),
        pa.field("metric", pa.string(), nullable=False),  # bits_per_byte | accuracy | centred_accuracy
        pa.field("group", pa.string(), nullable=False),  # a domain or `all`; a task/language for accuracies
        pa.field("value", pa.float64(), nullable=False),
        pa.field("stderr", pa.float64()),
    ]
)
LOWER_IS_BETTER = {"bits_per_byte": True, "accuracy": False, "centred_accuracy": False}
METRIC_ORDER = list(LOWER_IS_BETTER)  # how the report lists them: the headline metric first
CONFIDENCE = 0.95


class ArmFigure(BaseModel):
    arm: str
    metric: str
    group: str
    seeds: int
    mean: float
    std: float | None  # across seeds (ddof 1)
    half_width: float | None  # of the 95 % t-interval of the mean
    values: list[float]


class Comparison(BaseModel):
    arm: str
    baseline: str
    metric: str
    group: str
    difference: float  # arm mean - baseline mean
    half_width: float | None  # Welch 95 % interval
    better: bool | None  # None: not told apart from seed noise (or one seed only)

    def verdict(self) -> str:
        what = f"{self.metric.replace('_', ' ')} ({self.group})"
        interval = f"{abs(self.difference):.4f} ± {self.half_width:.4f}" if self.half_width is not None else ""
        if self.better is None:
            detail = (
                "one seed" if self.half_width is None else f"difference {self.difference:+.4f} ± {self.half_width:.4f}"
            )
            return f"{self.arm} and {self.baseline} are not told apart on {what} ({detail}, 95 % interval)"
        verb = "beats" if self.better else "trails"
        return f"{self.arm} {verb} {self.baseline} on {what} by {interval} (95 % interval)"


def _t_quantile(df: float) -> float:
    from scipy.stats import t

    return float(t.ppf(0.5 + CONFIDENCE / 2, df))


def final_rows(results: pa.Table) -> list[dict[str, Any]]:
    """Each run's rows at its last scored step."""
    rows = results.to_pylist()
    last: dict[tuple[str, int], int] = {}
    for row in rows:
        key = (row["arm"], row["seed"])
        last[key] = max(last.get(key, row["step"]), row["step"])
    return [row for row in rows if row["step"] == last[(row["arm"], row["seed"])]]


def arm_figures(results: pa.Table) -> list[ArmFigure]:
    values: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for row in sorted(final_rows(results), key=lambda r: (r["arm"], r["metric"], r["group"], r["seed"])):
        values[(row["arm"], row["metric"], row["group"])].append(row["value"])
    figures = []
    for (arm, metric, group), seen in sorted(values.items()):
        n = len(seen)
        std = float(np.std(seen, ddof=1)) if n > 1 else None
        half = _t_quantile(n - 1) * std / math.sqrt(n) if std is not None else None
        figures.append(ArmFigure(arm=arm, metric=metric, group=group, seeds=n, mean=float(np.mean(seen)), std=std,
                                 half_width=half, values=seen))  # fmt: skip
    return figures


def compare(figures: list[ArmFigure], baseline: str) -> list[Comparison]:
    """Every other arm against the baseline, per metric and group both have."""
    by_key = {(f.arm, f.metric, f.group): f for f in figures}
    comparisons = []
    for figure in figures:
        base = by_key.get((baseline, figure.metric, figure.group))
        if figure.arm == baseline or base is None:
            continue
        difference = figure.mean - base.mean
        half = None
        if figure.std is not None and base.std is not None:
            var_a, var_b = figure.std**2 / figure.seeds, base.std**2 / base.seeds
            se = math.sqrt(var_a + var_b)
            if se > 0:
                df = (var_a + var_b) ** 2 / (var_a**2 / (figure.seeds - 1) + var_b**2 / (base.seeds - 1))
                half = _t_quantile(df) * se
            else:
                half = 0.0
        better = None
        if half is not None and abs(difference) > half:
            better = (difference < 0) == LOWER_IS_BETTER[figure.metric]
        comparisons.append(Comparison(arm=figure.arm, baseline=baseline, metric=figure.metric, group=figure.group,
                                      difference=difference, half_width=half, better=better))  # fmt: skip
    return comparisons


def render_markdown(
    name: str, descriptions: dict[str, str], baseline: str, figures: list[ArmFigure], comparisons: list[Comparison],
    plot_file: str | None, facts: dict[str, Any],
) -> str:  # fmt: skip
    lines = [f"# Ablation `{name}`\n"]
    lines += [
        f"- **{arm}**{' (baseline)' if arm == baseline else ''}: {text or '-'}" for arm, text in descriptions.items()
    ]
    lines.append("\n" + ", ".join(f"{k}: {v}" for k, v in facts.items()) + "\n")
    headline = [c for c in comparisons if c.group == "all" or c.group.endswith("/all")]
    headline.sort(key=lambda c: (METRIC_ORDER.index(c.metric), c.group, c.arm))
    lines += ["## Verdicts\n", *[f"- {c.verdict()}" for c in headline or comparisons], ""]
    for metric in sorted({f.metric for f in figures}, key=METRIC_ORDER.index):
        lines += [
            f"## {metric.replace('_', ' ')} ({'lower' if LOWER_IS_BETTER[metric] else 'higher'} is better)\n",
            "| group | arm | seeds | mean | std | 95 % interval | vs baseline |",
            "|---|---|---:|---:|---:|---:|---:|",
        ]
        versus = {(c.arm, c.group): c for c in comparisons if c.metric == metric}
        for f in (f for f in figures if f.metric == metric):
            std = "" if f.std is None else f"{f.std:.4f}"
            half = "" if f.half_width is None else f"± {f.half_width:.4f}"
            c = versus.get((f.arm, f.group))
            against = (
                "" if c is None else f"{c.difference:+.4f}" + ("" if c.half_width is None else f" ± {c.half_width:.4f}")
            )
            lines.append(f"| {f.group} | {f.arm} | {f.seeds} | {f.mean:.4f} | {std} | {half} | {against} |")
        lines.append("")
    if plot_file:
        lines += ["## Held-out curves\n", f"![bits per byte against tokens]({plot_file})\n"]
    return "\n".join(lines)


def render_curves(results: pa.Table) -> bytes:
    """PNG: held-out bits per byte (all domains) against training tokens, the mean over seeds per arm with the
    range of its seeds shaded."""
    points: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in results.to_pylist():
        if row["metric"] == "bits_per_byte" and row["group"] == "all":
            points[row["arm"]][row["tokens_seen"]].append(row["value"])
    figure, axes = line_figure()
    for arm, by_tokens in sorted(points.items()):
        tokens = sorted(by_tokens)
        mean = [float(np.mean(by_tokens[t])) for t in tokens]
        axes.plot(tokens, mean, marker="o", label=arm)
        axes.fill_between(tokens, [min(by_tokens[t]) for t in tokens], [max(by_tokens[t]) for t in tokens], alpha=0.2)
    axes.set(title="shared held-out set", xlabel="training tokens", ylabel="bits per byte (all domains)")
    return finished_png(figure, axes)
