from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from pretrain_core import storage
from pretrain_core.evaluate.evaluator import evaluate_checkpoint
from pretrain_core.evaluate.history import (
    RESULTS_SCHEMA,
    active_runs,
    append_results,
    default_results_url,
    describe_checkpoint,
    find_regressions,
    latest_results,
    read_results,
    result_rows,
)
from pretrain_core.train.config import EvalConfig
from tests.train.token_corpus import WITHOUT_EVALUATIONS, TokenData

ROW_FIELDS_OF_THE_FIRST_TABLE = ("run", "step", "checkpoint", "date", "split", "domain", "perplexity", "bits_per_byte")
CFG = EvalConfig(batches_per_split=2, batch_size=8, max_new_tokens=4, num_threads=1)


def row(run: str, step: int, date: str, perplexity: float, split: str = "validation", domain: str = "all") -> dict:
    return {
        "run": run,
        "step": step,
        "checkpoint": f"runs/{run}/checkpoints/step-{step:08d}",
        "date": date,
        "split": split,
        "domain": domain,
        "perplexity": perplexity,
        "bits_per_byte": perplexity / 100,
    }


def table_of(rows: list[dict[str, Any]]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=RESULTS_SCHEMA)


def copy_run(trained_output: str, runs_root: Path, run: str) -> Path:
    """A training output copied under a runs root, without evaluations stored by other tests."""
    return Path(shutil.copytree(trained_output, runs_root / run, ignore=WITHOUT_EVALUATIONS))


def test_rows_of_a_real_evaluation_round_trip_through_the_table(trained_output: str, tmp_path: Path) -> None:
    result = evaluate_checkpoint(trained_output, cfg=CFG)
    rows = result_rows("run-a", result, "2026-12-01T02:00:00+00:00")
    expected = {(s, d) for s, r in result.splits.items() for d in ["all", *r.domains]}
    expected |= {("zero_shot", task) for task in result.tasks}
    assert {(r["split"], r["domain"]) for r in rows} == expected
    validation_all = next(r for r in rows if r["split"] == "validation" and r["domain"] == "all")
    assert validation_all["perplexity"] == result.splits["validation"].overall.perplexity  # type: ignore[union-attr]
    assert validation_all["step"] == 30 and validation_all["checkpoint"] == result.checkpoint_url

    url = str(tmp_path / "results" / "eval_results.parquet")
    assert read_results(url).num_rows == 0 and read_results(url).schema == RESULTS_SCHEMA
    append_results(url, rows)
    table = append_results(url, result_rows("run-a", result, "2026-12-02T02:00:00+00:00"))
    assert table.num_rows == 2 * len(rows)
    stored = read_results(url)
    assert stored.schema == RESULTS_SCHEMA and stored.to_pylist() == table.to_pylist()
    assert [p.name for p in (tmp_path / "results").iterdir()] == ["eval_results.parquet"]  # no temporary left


def test_regressions_compare_the_newest_result_with_the_previous_one() -> None:
    rows: list[dict[str, Any]] = [
        row("a", 10, "2026-12-01T02:00:00+00:00", 100.0),
        row("a", 20, "2026-12-02T02:00:00+00:00", 104.0),  # +4%: within 5%
        row("b", 10, "2026-12-01T02:00:00+00:00", 80.0),
        row("b", 20, "2026-12-02T02:00:00+00:00", 50.0),
        row("b", 30, "2026-12-03T02:00:00+00:00", 60.0),  # +20% over the previous (not over the first, 80)
        row("b", 30, "2026-12-03T02:00:00+00:00", 10.0, domain="code"),  # a single result: nothing to compare
    ]
    table = table_of(rows)
    [regression] = find_regressions(table, tolerance=0.05)
    assert (regression.run, regression.split, regression.domain, regression.metric) == (
        "b",
        "validation",
        "all",
        "perplexity",
    )
    assert (regression.previous, regression.current) == (50.0, 60.0)
    assert (regression.previous_step, regression.current_step) == (20, 30)
    assert regression.relative_change == pytest.approx(0.2)
    assert "+20.0%" in regression.describe() and "step 20" in regression.describe()
    assert find_regressions(table, tolerance=0.25) == []
    assert [r.run for r in find_regressions(table, tolerance=0.0)] == ["a", "b"]


def test_a_change_within_the_noise_is_no_regression() -> None:
    def bpb(step: int, value: float, stderr: float) -> dict[str, Any]:
        return {**row("a", step, f"2026-12-0{step}T02:00:00+00:00", 100.0), "bits_per_byte": value,
                "bits_per_byte_stderr": stderr}  # fmt: skip

    noisy = table_of([bpb(1, 1.00, 0.05), bpb(2, 1.10, 0.05)])  # +10 %, but 2 x 0.071 = 0.14 of noise
    assert find_regressions(noisy, tolerance=0.05, metric="bits_per_byte") == []
    precise = table_of([bpb(1, 1.00, 0.01), bpb(2, 1.10, 0.01)])
    [regression] = find_regressions(precise, tolerance=0.05, metric="bits_per_byte")
    assert regression.noise == pytest.approx(2 * (2 * 0.01**2) ** 0.5) and "noise ±0.0283" in regression.describe()


def test_accuracy_regressions_are_drops_beyond_an_absolute_tolerance_and_the_noise() -> None:
    def task(step: int, accuracy: float, stderr: float) -> dict[str, Any]:
        return {**row("a", step, f"2026-12-0{step}T02:00:00+00:00", 0.0, split="zero_shot", domain="last_word/en"),
                "perplexity": None, "bits_per_byte": None, "accuracy": accuracy, "accuracy_stderr": stderr}  # fmt: skip

    assert find_regressions(table_of([task(1, 0.50, 0.01), task(2, 0.60, 0.01)]), 0.02, "accuracy") == []  # better
    assert find_regressions(table_of([task(1, 0.50, 0.05), task(2, 0.40, 0.05)]), 0.02, "accuracy") == []  # noise
    [drop] = find_regressions(table_of([task(1, 0.50, 0.01), task(2, 0.40, 0.01)]), 0.02, "accuracy")
    assert (drop.previous, drop.current) == (0.5, 0.4) and "-0.100" in drop.describe()


def test_a_table_written_before_the_newer_columns_reads_with_them_empty(tmp_path: Path) -> None:
    old_schema = pa.schema([f for f in RESULTS_SCHEMA if f.name in ROW_FIELDS_OF_THE_FIRST_TABLE])
    url = str(tmp_path / "eval_results.parquet")
    storage.write_parquet(url, pa.Table.from_pylist([row("a", 10, "2026-12-01T02:00:00+00:00", 100.0)], old_schema))
    [stored] = read_results(url).to_pylist()
    assert stored["perplexity"] == 100.0 and stored["accuracy"] is None and stored["bits_per_byte_stderr"] is None


def test_history_is_ordered_by_date_not_by_append_order() -> None:
    table = table_of(
        [row("a", 20, "2026-12-02T02:00:00+00:00", 120.0), row("a", 10, "2026-12-01T02:00:00+00:00", 100.0)]
    )
    [regression] = find_regressions(table, tolerance=0.05)  # 100 on the 1st, then 120 on the 2nd
    assert (regression.previous, regression.current) == (100.0, 120.0)
    assert [(r["run"], r["step"]) for r in latest_results(table)] == [("a", 20)]


def test_active_runs_are_run_directories_with_a_complete_checkpoint(
    trained_output: str, token_data: TokenData, tmp_path: Path
) -> None:
    runs_root = tmp_path / "train"
    copy_run(trained_output, runs_root, "run-b")
    copy_run(trained_output, runs_root, "run-a")
    (runs_root / "run-idle" / "checkpoints" / "step-00000005").mkdir(parents=True)  # an interrupted save only
    (runs_root / "eval_results.parquet").write_bytes(b"not a run")
    runs = active_runs(str(runs_root))
    assert [(r.run, r.step) for r in runs] == [("run-a", 30), ("run-b", 30)]
    assert runs[0].checkpoint_url == f"{runs_root}/run-a/checkpoints/step-00000030"
    assert runs[0].runs_root == str(runs_root) and default_results_url(runs[0].runs_root) == str(
        runs_root / "eval_results.parquet"
    )
    assert (runs[0].tokens_url, runs[0].tokenizer_url) == (token_data.tokens_url, token_data.tokenizer_url)
    assert active_runs(str(tmp_path / "nowhere")) == []

    with pytest.raises(FileNotFoundError, match="not a complete checkpoint"):
        describe_checkpoint(str(runs_root / "run-idle" / "checkpoints" / "step-00000005"))
    with pytest.raises(ValueError, match="not a checkpoint directory"):
        describe_checkpoint(str(runs_root / "run-a"))
