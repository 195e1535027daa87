from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pytest
from matplotlib.image import imread

from pretrain_core.evaluate.history import RESULTS_SCHEMA
from pretrain_core.evaluate.trend_plot import METRICS, render_trend_plot, trend_plot_url

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def history() -> pa.Table:
    """Two runs over three nights, two splits and two domains each (one night without bits per byte), and two
    zero-shot tasks with their standard errors."""
    rows = [
        {
            "run": run,
            "step": 100 * night,
            "checkpoint": f"runs/{run}/checkpoints/step-{100 * night:08d}",
            "date": f"2026-12-0{night}T02:00:00+00:00",
            "split": split,
            "domain": domain,
            "perplexity": 900.0 / night + offset,
            "bits_per_byte": None if night == 2 else 4.0 / night,
        }
        for night in (1, 2, 3)
        for run, offset in (("run-a", 0.0), ("run-b", 25.0))
        for split in ("validation", "test")
        for domain in ("all", "code")
    ]
    rows += [
        {
            "run": run,
            "step": 100 * night,
            "checkpoint": f"runs/{run}/checkpoints/step-{100 * night:08d}",
            "date": f"2026-12-0{night}T02:00:00+00:00",
            "split": "zero_shot",
            "domain": task,
            "accuracy": 0.25 + 0.05 * night,
            "accuracy_stderr": 0.04,
        }
        for night in (1, 2, 3)
        for run in ("run-a", "run-b")
        for task in ("continuation/en", "last_word/en")
    ]
    return pa.Table.from_pylist(rows, schema=RESULTS_SCHEMA)


def pixels(png: bytes) -> np.ndarray:
    assert png.startswith(PNG_SIGNATURE)
    return imread(io.BytesIO(png), format="png")


@pytest.fixture(scope="module")
def rendered() -> dict[str, bytes]:
    return {metric: render_trend_plot(history(), metric) for metric in METRICS}


def test_one_row_of_panels_per_split_with_lines_drawn(rendered: dict[str, bytes]) -> None:
    for metric, png in rendered.items():
        image = pixels(png)
        splits = 1 if metric == "accuracy" else 2  # accuracy: the zero-shot rows only
        assert image.shape[:2] == (splits * 288, 960)  # 3.6 x 12 inches per split at 80 dpi
        assert (image[..., :3] < 0.5).mean() > 0.005  # axes, text and lines, not a blank canvas


def test_same_history_gives_the_same_bytes_and_metrics_differ(rendered: dict[str, bytes]) -> None:
    assert render_trend_plot(history(), "perplexity") == rendered["perplexity"]
    assert rendered["perplexity"] != rendered["bits_per_byte"]


def test_an_empty_history_still_renders() -> None:
    image = pixels(render_trend_plot(RESULTS_SCHEMA.empty_table(), "perplexity"))
    assert image.shape[:2] == (288, 960)


def test_plots_live_beside_the_results_table() -> None:
    assert (
        trend_plot_url("s3://b/train/eval_results.parquet", "perplexity") == "s3://b/train/eval_results.perplexity.png"
    )
