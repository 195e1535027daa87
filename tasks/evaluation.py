"""Tasks for evaluation over time: check a checkpoint, find active runs, keep the results table, plot trends,
report and signal regressions."""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from typing import Any

import pyarrow.compute as pc
from prefect import get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE
from prefect.events import emit_event

from pretrain_core import storage
from pretrain_core.evaluate.evaluator import EvalResult, run_of
from pretrain_core.evaluate.history import (
    ZERO_SHOT,
    Regression,
    RunCheckpoint,
    active_runs,
    append_results,
    default_results_url,
    describe_checkpoint,
    find_regressions,
    latest_results,
    read_results,
    result_rows,
)
from pretrain_core.evaluate.trend_plot import METRICS, plotting_available, render_trend_plot, trend_plot_url
from pretrain_core.train.checkpoint.records import evaluated_steps, evaluation_url, unevaluated_checkpoints
from pretrain_core.train.shards.bill_report import bill_summary

REGRESSION_EVENT = "pretrain.eval.regression"


@task(cache_policy=NO_CACHE)
def check_checkpoint(checkpoint_url: str, step: int) -> RunCheckpoint:
    """The checkpoint's run and inputs; refuse a step that is not the checkpoint's (a mis-templated trigger)."""
    checkpoint = describe_checkpoint(checkpoint_url)
    if checkpoint.step != step:
        raise ValueError(f"{checkpoint_url} holds step {checkpoint.step}, not the requested step {step}")
    return checkpoint


@task(cache_policy=NO_CACHE)
def recorded_evaluation(checkpoint_url: str, step: int) -> EvalResult | None:
    """The checkpoint's evaluation if one is recorded: an earlier run (evaluating the run's waiting checkpoints in
    step order) may have done it, and pruning may have deleted the checkpoint since."""
    url = evaluation_url(run_of(checkpoint_url.rstrip("/")), step)
    if not storage.exists(url):
        return None
    get_run_logger().info("step %d of %s was evaluated already: its recorded evaluation stands", step, checkpoint_url)
    return EvalResult.model_validate(storage.read_json(url))


@task(cache_policy=NO_CACHE)
def earlier_unevaluated(checkpoint_url: str, before_step: int) -> list[str]:
    """The run's complete checkpoints before ``before_step`` with no evaluation recorded, oldest first: evaluated
    in this order, so one run's evaluations go in step order whichever queued flow run starts first."""
    waiting = [url for _, url in unevaluated_checkpoints(run_of(checkpoint_url), up_to_step=before_step - 1)]
    if len(waiting) > 1:
        get_run_logger().info(
            "%d checkpoints of the run wait for evaluation: evaluating them in step order", len(waiting)
        )
    return waiting


@task(cache_policy=NO_CACHE)
def list_active_runs(runs_root: str) -> list[RunCheckpoint]:
    runs = active_runs(runs_root)
    get_run_logger().info("%d runs with checkpoints under %s", len(runs), runs_root)
    return runs


@task(cache_policy=NO_CACHE)
def record_results(evaluations: list[tuple[str, EvalResult]], results_url: str) -> int:
    """Append (run, result) evaluations to the results table, all stamped with this moment (UTC)."""
    return _append(evaluations, results_url)


def _append(evaluations: list[tuple[str, EvalResult]], results_url: str) -> int:
    date = datetime.now(UTC).isoformat(timespec="seconds")
    rows = [row for run, result in evaluations for row in result_rows(run, result, date)]
    table = append_results(results_url, rows)
    get_run_logger().info("%d rows appended to %s (%d in all)", len(rows), results_url, table.num_rows)
    return len(rows)


@task(cache_policy=NO_CACHE)
def record_missing_results(checkpoint_url: str, up_to_step: int, results_url: str | None = None) -> int:
    """Append the rows of every evaluation of the checkpoint's run recorded up to ``up_to_step`` that the results
    table lacks: an evaluation killed between its record and its rows gets them from the next run for the run,
    and rows already there are never added twice. Returns how many evaluations it added."""
    run_dir = run_of(checkpoint_url.rstrip("/"))
    runs_root, run = run_dir.rsplit("/", 1)
    results_url = results_url or default_results_url(runs_root)
    present = {(row["run"], row["step"]) for row in read_results(results_url).select(["run", "step"]).to_pylist()}
    missing = [
        (run, EvalResult.model_validate(storage.read_json(evaluation_url(run_dir, step))))
        for step in evaluated_steps(run_dir)
        if step <= up_to_step and (run, step) not in present
    ]
    if missing:
        _append(missing, results_url)
    return len(missing)


@task(cache_policy=NO_CACHE)
def render_trends(results_url: str) -> dict[str, str]:
    """Write one trend PNG per metric beside the results table; return metric → URL (none without matplotlib)."""
    if not plotting_available():
        get_run_logger().warning("no trend plots: they need matplotlib (pip install 'pretrain[eval]')")
        return {}
    table = read_results(results_url)
    urls = {metric: trend_plot_url(results_url, metric) for metric in METRICS}
    for metric, url in urls.items():
        storage.write_bytes(url, render_trend_plot(table, metric))
    return urls


@task(cache_policy=NO_CACHE)
def check_regressions(
    results_url: str, tolerance: float, runs: list[str], accuracy_tolerance: float = 0.02
) -> list[Regression]:
    """Regressions of the given runs (those evaluated now, so a run that has stopped is not reported again every
    night): bits per byte beyond ``tolerance`` (relative; perplexity where a series has no bits per byte, as a
    masked-objective model's) and zero-shot accuracy beyond ``accuracy_tolerance`` (absolute), each also beyond
    twice its combined standard error."""
    table = read_results(results_url)
    no_bytes = table.filter(pc.and_(pc.is_null(table["bits_per_byte"]), pc.not_equal(table["split"], ZERO_SHOT)))
    found = [
        *find_regressions(table, tolerance, "bits_per_byte"),
        *find_regressions(no_bytes, tolerance, "perplexity"),
        *find_regressions(table, accuracy_tolerance, "accuracy"),
    ]
    return [r for r in found if r.run in runs]


def _with_error(value: float | None, stderr: float | None, digits: int) -> str:
    if value is None:
        return ""
    return f"{value:.{digits}f}" + (f" ± {stderr:.{digits}f}" if stderr is not None else "")


def _report_markdown(
    results_url: str, tolerance: float, regressions: list[Regression], plot_urls: dict[str, str]
) -> str:
    lines = [
        f"# Evaluation trends\n\nResults table: `{results_url}`; tolerance {tolerance:.1%} (bits per byte), and "
        "every change must exceed twice its standard error.\n"
    ]
    lines.append(f"## Regressions ({len(regressions)})\n")
    lines += [f"- {r.describe()}" for r in regressions] or ["None beyond tolerance."]
    latest = latest_results(read_results(results_url))
    lines += [
        "\n## Latest values\n",
        "| run | step | date | split | domain | perplexity | bits/byte (± s.e.) |",
        "|---|---:|---|---|---|---:|---:|",
    ]
    for row in (r for r in latest if r["split"] != ZERO_SHOT):
        lines.append(
            f"| {row['run']} | {row['step']} | {row['date']} | {row['split']} | {row['domain']} "
            f"| {_with_error(row['perplexity'], None, 2)} "
            f"| {_with_error(row['bits_per_byte'], row['bits_per_byte_stderr'], 4)} |"
        )
    tasks = [r for r in latest if r["split"] == ZERO_SHOT]
    if tasks:
        lines += ["\n## Zero-shot tasks\n", "| run | step | task | accuracy (± s.e.) |", "|---|---:|---|---:|"]
        lines += [
            f"| {r['run']} | {r['step']} | {r['domain']} | {_with_error(r['accuracy'], r['accuracy_stderr'], 3)} |"
            for r in tasks
        ]
    lines += ["\n## What each run's latest evaluated checkpoint was fed\n", *_bills(latest)]
    lines.append("\n## Trends\n")
    for metric, url in plot_urls.items():
        png = base64.b64encode(storage.read_bytes(url)).decode()
        lines.append(f"![{metric}](data:image/png;base64,{png})\n\n`{url}`\n")
    return "\n".join(lines)


def _bills(latest: list[dict[str, Any]]) -> list[str]:
    """A line per run from its latest evaluated checkpoint's bill of materials, as its evaluation record keeps it
    (the checkpoint itself may be pruned by now; `pretrain card --model` shows a kept one whole)."""
    checkpoints = {(row["run"], row["step"]): row["checkpoint"] for row in latest}
    lines = []
    for (run, step), checkpoint in sorted(checkpoints.items()):
        record = evaluation_url(run_of(checkpoint), step)
        fed = storage.read_json(record).get("fed", {}) if storage.exists(record) else {}
        lines.append(f"- {run} step {step}: {bill_summary(fed)}")
    return lines or ["No evaluated checkpoints yet."]


@task(cache_policy=NO_CACHE)
def publish_report(results_url: str, tolerance: float, regressions: list[Regression], plot_urls: dict[str, str]) -> str:
    """A markdown artifact with the latest values, the regressions and the trend plots inline."""
    markdown = _report_markdown(results_url, tolerance, regressions, plot_urls)
    create_markdown_artifact(key="eval-trends", markdown=markdown, description=f"Evaluation trends of {results_url}")
    return markdown


@task(cache_policy=NO_CACHE)
def emit_regression_events(regressions: list[Regression], tolerance: float) -> list[str]:
    """One `pretrain.eval.regression` event per regression, on the run's resource (automations match on it);
    return the ids of the events handed to the API."""
    logger = get_run_logger()
    emitted = []
    for r in regressions:
        event = emit_event(
            event=REGRESSION_EVENT,
            resource={"prefect.resource.id": f"pretrain.run.{r.run}", "prefect.resource.name": r.run},
            payload={**r.model_dump(mode="json"), "tolerance": tolerance},
        )
        if event is None:
            logger.warning("no Prefect API to send %s for %s to", REGRESSION_EVENT, r.describe())
        else:
            emitted.append(str(event.id))
    return emitted
