"""Evaluation history: one Parquet table of results across training runs, and the regressions it shows.

A row is one (run, checkpoint, evaluation date, split, domain) measurement; domain `all` is the split overall.
Zero-shot tasks are rows of split `zero_shot` whose domain names the task and language (`continuation/en`), with
an accuracy instead of a perplexity. Figures carry their standard error where the evaluation measures one, and
a regression is a change both beyond the tolerance and beyond twice the combined standard error: noise of the
held-out draw does not raise an alarm.
Appending rewrites the whole table atomically: the table stays small (rows per night per run are a handful), and
readers never see a half-written file. Writers are expected to take turns (one nightly run, or deployments with a
concurrency limit of one): two appends racing each other keep only the later one's view.
"""

from __future__ import annotations

import re
from typing import Any

import pyarrow as pa
from pydantic import BaseModel

from pretrain_core import storage
from pretrain_core.evaluate.evaluator import EvalResult
from pretrain_core.train.checkpoint.catalog import MANIFEST, completed_checkpoints, read_meta, saved_setting

RESULTS_FILE = "eval_results.parquet"
OVERALL = "all"
RESULTS_SCHEMA = pa.schema(
    [
        pa.field("run", pa.string(), nullable=False),
        pa.field("step", pa.int64(), nullable=False),
        pa.field("checkpoint", pa.string(), nullable=False),
        pa.field("date", pa.string(), nullable=False),  # UTC ISO 8601, so it sorts as text
        pa.field("split", pa.string(), nullable=False),
        pa.field("domain", pa.string(), nullable=False),
        pa.field("perplexity", pa.float64()),  # None on zero-shot rows
        pa.field("bits_per_byte", pa.float64()),  # None when the scored tokens stand for no bytes
        pa.field("bits_per_byte_stderr", pa.float64()),
        pa.field("accuracy", pa.float64()),  # zero-shot rows only
        pa.field("accuracy_stderr", pa.float64()),
    ]
)
ZERO_SHOT = "zero_shot"
# metric → (a rise is worse, the column of its standard error)
METRIC_DIRECTION: dict[str, tuple[bool, str | None]] = {
    "perplexity": (True, None),
    "bits_per_byte": (True, "bits_per_byte_stderr"),
    "accuracy": (False, "accuracy_stderr"),
}
NOISE_SIGMAS = 2.0
_RUN_CHECKPOINT = re.compile(r"^(?P<root>.+)/(?P<run>[^/]+)/checkpoints/step-\d{8}$")


class RunCheckpoint(BaseModel):
    """A complete checkpoint of a training run and the data it was trained on (its default evaluation inputs)."""

    run: str
    runs_root: str
    step: int
    checkpoint_url: str
    tokens_url: str
    tokenizer_url: str


class Regression(BaseModel):
    run: str
    split: str
    domain: str
    metric: str
    previous: float
    current: float
    previous_step: int
    current_step: int
    checkpoint: str
    noise: float | None = None  # NOISE_SIGMAS x the combined standard error of the two figures, when known

    @property
    def relative_change(self) -> float:
        return self.current / self.previous - 1

    def describe(self) -> str:
        change = f"{self.current - self.previous:+.3f}" if self.metric == "accuracy" else f"{self.relative_change:+.1%}"
        noise = f", noise ±{self.noise:.3g}" if self.noise is not None else ""
        return (
            f"{self.run} {self.split}/{self.domain} {self.metric} {self.previous:.4g} (step {self.previous_step}) → "
            f"{self.current:.4g} (step {self.current_step}), {change}{noise}"
        )


def default_results_url(runs_root: str) -> str:
    return storage.join(runs_root, RESULTS_FILE)


def describe_checkpoint(checkpoint_url: str) -> RunCheckpoint:
    """Name the run a checkpoint belongs to (`<runs_root>/<run>/checkpoints/step-N`) and read its inputs."""
    url = checkpoint_url.rstrip("/")
    match = _RUN_CHECKPOINT.match(url)
    if match is None:
        raise ValueError(f"{checkpoint_url} is not a checkpoint directory <runs_root>/<run>/checkpoints/step-NNNNNNNN")
    if not storage.exists(storage.join(url, MANIFEST)):
        raise FileNotFoundError(f"{checkpoint_url} is not a complete checkpoint (no {MANIFEST})")
    meta = read_meta(url)
    return RunCheckpoint(
        run=match["run"],
        runs_root=match["root"],
        step=int(meta["step"]),
        checkpoint_url=url,
        tokens_url=saved_setting(meta, "tokens_url"),
        tokenizer_url=meta["tokenizer_url"],
    )


def active_runs(runs_root: str) -> list[RunCheckpoint]:
    """The newest complete checkpoint of every run directory under ``runs_root`` that has one, by run name."""
    fs, path = storage.filesystem(runs_root)
    fs.invalidate_cache(path)  # object stores cache listings; training may have committed a checkpoint since
    if not fs.exists(path):
        return []
    found = []
    for entry in sorted(fs.ls(path, detail=True), key=lambda e: str(e["name"])):
        if entry["type"] != "directory":
            continue
        done = completed_checkpoints(storage.join(runs_root, str(entry["name"]).rstrip("/").rsplit("/", 1)[-1]))
        if done:
            found.append(describe_checkpoint(done[-1][1]))
    return found


def result_rows(run: str, result: EvalResult, date: str) -> list[dict[str, Any]]:
    """Table rows for one evaluation: each split overall (domain `all`) and per domain, then each zero-shot task."""
    base = {"run": run, "step": result.step, "checkpoint": result.checkpoint_url, "date": date}
    rows = [
        {
            **base,
            "split": split,
            "domain": domain,
            "perplexity": metrics.perplexity,
            "bits_per_byte": metrics.bits_per_byte,
            "bits_per_byte_stderr": metrics.bits_per_byte_stderr,
        }
        for split, split_result in result.splits.items()
        for domain, metrics in [(OVERALL, split_result.overall), *split_result.domains.items()]
        if metrics is not None
    ]
    rows += [
        {**base, "split": ZERO_SHOT, "domain": task, "accuracy": score.accuracy, "accuracy_stderr": score.stderr}
        for task, score in sorted(result.tasks.items())
    ]
    return [{field.name: row.get(field.name) for field in RESULTS_SCHEMA} for row in rows]


def read_results(results_url: str) -> pa.Table:
    """The results table, empty (with its schema) before the first append. A table written before a column
    existed gets it, empty."""
    if not storage.exists(results_url):
        return RESULTS_SCHEMA.empty_table()
    table = storage.read_parquet(results_url)
    for field in RESULTS_SCHEMA:
        if field.name not in table.column_names:
            table = table.append_column(field, pa.nulls(table.num_rows, field.type))
    return table.select(RESULTS_SCHEMA.names).cast(RESULTS_SCHEMA)


def append_results(results_url: str, rows: list[dict[str, Any]]) -> pa.Table:
    """Add rows to the table and rewrite it atomically; return the whole table."""
    table = pa.concat_tables([read_results(results_url), pa.Table.from_pylist(rows, schema=RESULTS_SCHEMA)])
    storage.write_parquet(results_url, table)
    return table


def series(table: pa.Table) -> dict[tuple[str, str, str], list[dict[str, Any]]]:
    """Rows per (run, split, domain), oldest first (by date, then by the order they were appended)."""
    by_key: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for row in sorted(table.to_pylist(), key=lambda r: str(r["date"])):  # stable: equal dates keep append order
        by_key.setdefault((row["run"], row["split"], row["domain"]), []).append(row)
    return by_key


def latest_results(table: pa.Table) -> list[dict[str, Any]]:
    """The newest row of each (run, split, domain), sorted by those keys."""
    return [rows[-1] for _, rows in sorted(series(table).items())]


def find_regressions(
    table: pa.Table, tolerance: float, metric: str = "perplexity", sigmas: float = NOISE_SIGMAS
) -> list[Regression]:
    """Series whose newest ``metric`` is worse than the previous one by more than ``tolerance`` (relative for
    perplexity and bits per byte, absolute for accuracy) and, where both figures have a standard error, by more
    than ``sigmas`` times their combined error."""
    rise_is_worse, stderr_column = METRIC_DIRECTION[metric]
    regressions = []
    for (run, split, domain), rows in sorted(series(table).items()):
        if len(rows) < 2 or rows[-1][metric] is None or rows[-2][metric] is None:
            continue
        previous, current = rows[-2], rows[-1]
        worse_by = (current[metric] - previous[metric]) * (1 if rise_is_worse else -1)
        allowed = tolerance * abs(previous[metric]) if rise_is_worse else tolerance
        noise = None
        if stderr_column and previous[stderr_column] is not None and current[stderr_column] is not None:
            noise = sigmas * (previous[stderr_column] ** 2 + current[stderr_column] ** 2) ** 0.5
        if worse_by > allowed and worse_by > (noise or 0.0):
            regressions.append(
                Regression(
                    run=run,
                    split=split,
                    domain=domain,
                    metric=metric,
                    previous=previous[metric],
                    current=current[metric],
                    previous_step=previous["step"],
                    current_step=current["step"],
                    checkpoint=current["checkpoint"],
                    noise=noise,
                )
            )
    return regressions
