"""Trend plots of the evaluation history: one PNG per metric, each split against training step and against date.

Rendered with matplotlib's object API on the Agg canvas, so it needs no display and touches no global pyplot state.
matplotlib is an optional dependency (`pretrain[eval]`): imported only when a plot is drawn.
"""

from __future__ import annotations

import importlib.util
import io
from datetime import datetime

import pyarrow as pa

from pretrain_core.evaluate.history import series

METRICS = ("perplexity", "bits_per_byte", "accuracy")  # accuracy: the zero-shot rows
ROW_INCHES = 3.6


def trend_plot_url(results_url: str, metric: str) -> str:
    """Where a metric's plot lives: beside the results table, named after it (`eval_results.perplexity.png`)."""
    return f"{results_url.removesuffix('.parquet')}.{metric}.png"


def plotting_available() -> bool:
    """Whether matplotlib (the `eval` extra) is installed, so trend plots can be drawn."""
    return importlib.util.find_spec("matplotlib") is not None


def render_trend_plot(table: pa.Table, metric: str) -> bytes:
    """PNG bytes: a row per split, the left panel over steps (with ±2 standard-error bars where the figures have
    one), the right over evaluation dates; a line per (run, domain). Splits without the metric are left out."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    by_key = {key: rows for key, rows in series(table).items() if any(r[metric] is not None for r in rows)}
    splits = sorted({split for _, split, _ in by_key}, key=lambda s: (s != "validation", s)) or ["(no results yet)"]
    height = ROW_INCHES * len(splits)
    figure = Figure(figsize=(12, height))
    FigureCanvasAgg(figure)
    # fixed margins: matplotlib's layout engines cost more than drawing itself
    figure.subplots_adjust(left=0.07, right=0.98, top=1 - 0.35 / height, bottom=1.0 / height, wspace=0.2, hspace=0.55)
    axes = figure.subplots(len(splits), 2, squeeze=False)
    for (run, split, domain), rows in sorted(by_key.items()):
        points = [r for r in rows if r[metric] is not None]
        if not points:
            continue
        by_step, by_date = axes[splits.index(split)]
        label = f"{run} · {domain}"
        ordered = sorted(points, key=lambda r: r["step"])
        errors = [r.get(f"{metric}_stderr") for r in ordered]
        known = [float(e) for e in errors if e is not None]
        bars = [2 * e for e in known] if len(known) == len(errors) else None  # ±2 standard errors
        by_step.errorbar(
            [r["step"] for r in ordered], [r[metric] for r in ordered], yerr=bars, marker="o", capsize=3, label=label
        )
        by_date.plot([datetime.fromisoformat(r["date"]) for r in points], [r[metric] for r in points], marker="o")
    for split, (by_step, by_date) in zip(splits, axes, strict=True):
        by_step.set(title=f"{split}: {metric} by step", xlabel="step", ylabel=metric)
        by_date.set(title=f"{split}: {metric} by date (UTC)", xlabel="date", ylabel=metric)
        by_date.tick_params(axis="x", labelrotation=30)
        if metric == "perplexity":  # it falls by orders of magnitude early in training
            by_step.set_yscale("log")
            by_date.set_yscale("log")
        if by_step.has_data():
            by_step.legend(fontsize="small", loc="upper right")
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=80, metadata={"Software": None})
    return buffer.getvalue()
