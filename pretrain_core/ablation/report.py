"""Collect every run's scores into the ablation's outputs: `results.parquet` (every scored checkpoint),
`ablation.md` (tables, intervals, verdicts) and `curves.png`, under the ablation's output root."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from pydantic import BaseModel

from pretrain_core import storage
from pretrain_core.ablation.scoring import score_checkpoint
from pretrain_core.ablation.spec import AblationSpec
from pretrain_core.ablation.summary import (
    RESULTS_SCHEMA,
    ArmFigure,
    Comparison,
    arm_figures,
    compare,
    render_curves,
    render_markdown,
)
from pretrain_core.train.checkpoint.catalog import completed_checkpoints

SCORES_FILE = "ablation_scores.parquet"


class AblationReport(BaseModel):
    results_url: str
    report_url: str
    plot_url: str | None
    figures: list[ArmFigure]
    comparisons: list[Comparison]
    markdown: str


def score_run(arm: str, seed: int, output_url: str, heldout_url: str, items_url: str) -> str:
    """Score every kept checkpoint of one proxy run (zero-shot tasks on the last only) into the run's
    `ablation_scores.parquet`; a run scored before on the same checkpoints is not scored again."""
    url = storage.join(output_url, SCORES_FILE)
    checkpoints = completed_checkpoints(output_url)
    if not checkpoints:
        raise FileNotFoundError(f"{output_url} has no complete checkpoint to score")
    if storage.exists(url):
        scored = set(storage.read_parquet(url, columns=["step"])["step"].to_pylist())
        if scored == {step for step, _ in checkpoints}:
            return url
    rows: list[dict[str, Any]] = []
    for index, (_, checkpoint) in enumerate(checkpoints):
        last = index == len(checkpoints) - 1
        rows += score_checkpoint(checkpoint, heldout_url, items_url if last else None)
    table = pa.Table.from_pylist([{**row, "arm": arm, "seed": seed} for row in rows], schema=RESULTS_SCHEMA)
    storage.write_parquet(url, table)
    return url


def summarize(spec: AblationSpec, score_urls: list[str], facts: dict[str, Any]) -> AblationReport:
    results = pa.concat_tables([storage.read_parquet(url).cast(RESULTS_SCHEMA) for url in score_urls])
    results_url = storage.join(spec.output_root, "results.parquet")
    storage.write_parquet(results_url, results)
    figures = arm_figures(results)
    comparisons = compare(figures, spec.baseline)
    plot_url = None
    try:
        png = render_curves(results)
    except ModuleNotFoundError:  # matplotlib is the eval extra's: the report goes without its plot
        png = None
    if png is not None:
        plot_url = storage.join(spec.output_root, "curves.png")
        storage.write_bytes(plot_url, png)
    descriptions = {name: arm.description for name, arm in spec.arms.items()}
    markdown = render_markdown(
        spec.name, descriptions, spec.baseline, figures, comparisons, "curves.png" if plot_url else None, facts
    )
    report_url = storage.join(spec.output_root, "ablation.md")
    storage.write_bytes(report_url, markdown.encode("utf-8"))
    return AblationReport(
        results_url=results_url,
        report_url=report_url,
        plot_url=plot_url,
        figures=figures,
        comparisons=comparisons,
        markdown=markdown,
    )
