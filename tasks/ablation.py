"""Tasks of the ablation flow: the shared held-out set, scoring each proxy run, and the report."""

from __future__ import annotations

import base64
from typing import Any

from prefect import get_run_logger, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE

from pretrain_core import storage
from pretrain_core.ablation.heldout import build_heldout, read_heldout
from pretrain_core.ablation.report import AblationReport, score_run, summarize
from pretrain_core.ablation.scoring import write_items
from pretrain_core.ablation.spec import AblationSpec


@task(cache_policy=NO_CACHE)
def prepare_heldout(spec: AblationSpec) -> tuple[str, str]:
    """The shared held-out set and its zero-shot items; returns their URLs."""
    heldout_url = build_heldout(spec)
    table = read_heldout(heldout_url)
    items_url = write_items(heldout_url, spec.heldout.zero_shot_items, spec.heldout.seed)
    get_run_logger().info(
        "held-out set: %d documents (%s) from arm %s; items at %s",
        table.num_rows, ", ".join(sorted(set(table["domain"].to_pylist()))), spec.heldout_arm, items_url,
    )  # fmt: skip
    return heldout_url, items_url


@task(cache_policy=NO_CACHE, task_run_name="score-{arm}-seed-{seed}")
def score_proxy_run(arm: str, seed: int, output_url: str, heldout_url: str, items_url: str) -> str:
    return score_run(arm, seed, output_url, heldout_url, items_url)


@task(cache_policy=NO_CACHE)
def report_ablation(spec: AblationSpec, score_urls: list[str], facts: dict[str, Any]) -> AblationReport:
    """Write results.parquet, ablation.md and curves.png; publish the report (plot inline) and the headline table
    as artifacts."""
    report = summarize(spec, score_urls, facts)
    markdown = report.markdown
    if report.plot_url:
        png = base64.b64encode(storage.read_bytes(report.plot_url)).decode()
        markdown = markdown.replace("](curves.png)", f"](data:image/png;base64,{png})")
    create_markdown_artifact(key=f"ablation-{spec.name}", markdown=markdown, description=report.report_url)
    rows = [
        {"arm": f.arm, "metric": f.metric, "group": f.group, "seeds": f.seeds, "mean": round(f.mean, 5),
         "std": None if f.std is None else round(f.std, 5),
         "interval": None if f.half_width is None else round(f.half_width, 5)}
        for f in report.figures
        if f.group == "all" or f.group.endswith("/all")
    ]  # fmt: skip
    create_table_artifact(key=f"ablation-{spec.name}-table", table=rows, description="mean over seeds, 95 % interval")
    for comparison in report.comparisons:
        if comparison.group == "all" or comparison.group.endswith("/all"):
            get_run_logger().info("%s", comparison.verdict())
    return report
