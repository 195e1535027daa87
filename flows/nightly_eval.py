"""nightly-eval: evaluate the newest checkpoint of every active run, keep the history, plot it, flag regressions."""

from __future__ import annotations

from typing import Annotated

from prefect import flow, get_run_logger
from pydantic import BaseModel, Field

from pretrain_core.evaluate.history import Regression, RunCheckpoint, default_results_url
from pretrain_core.train.config import EvalConfig
from tasks.evaluation import (
    check_regressions,
    emit_regression_events,
    list_active_runs,
    publish_report,
    record_results,
    render_trends,
)
from tasks.training import evaluate


class EvalRegressionError(RuntimeError):
    """Raised to fail the flow run when a metric got worse beyond tolerance."""

    def __init__(self, regressions: list[Regression]) -> None:
        self.regressions = regressions
        listed = "\n".join(f"  - {r.describe()}" for r in regressions)
        super().__init__(f"{len(regressions)} evaluation regression(s) beyond tolerance:\n{listed}")


class NightlyEval(BaseModel):
    results_url: str
    evaluated: list[RunCheckpoint]
    trend_plots: dict[str, str]


@flow(name="nightly-eval", log_prints=True)
def nightly_eval(
    runs_root: str,
    results_url: str | None = None,
    tolerance: Annotated[float, Field(ge=0)] = 0.05,
    cfg: EvalConfig | None = None,
    accuracy_tolerance: Annotated[float, Field(ge=0, le=1)] = 0.02,
) -> NightlyEval:
    """Evaluate each run's newest checkpoint, append the results, plot trends and fail on regressions.

    Args:
        runs_root: URL whose subdirectories are training runs (`RUNS_ROOT/RUN/checkpoints/step-N`).
        results_url: Parquet results table; `RUNS_ROOT/eval_results.parquet` when empty.
        tolerance: relative bits-per-byte increase over a run's previous result counted as a regression (when
            it also exceeds twice the two figures' combined standard error).
        cfg: evaluation settings.
        accuracy_tolerance: zero-shot accuracy drop (absolute) counted as a regression, under the same noise rule.
    """
    results_url = results_url or default_results_url(runs_root)
    runs = list_active_runs(runs_root)
    if not runs:
        get_run_logger().warning("no run under %s has a complete checkpoint: nothing to evaluate", runs_root)
        return NightlyEval(results_url=results_url, evaluated=[], trend_plots={})
    evaluations = [
        (run.run, evaluate(run.checkpoint_url, run.tokens_url, run.tokenizer_url, cfg or EvalConfig())) for run in runs
    ]  # one after another: each evaluation uses every thread it is given
    record_results(evaluations, results_url)
    plots = render_trends(results_url)
    regressions = check_regressions(results_url, tolerance, [run.run for run in runs], accuracy_tolerance)
    publish_report(results_url, tolerance, regressions, plots)
    if regressions:
        emit_regression_events(regressions, tolerance)
        raise EvalRegressionError(regressions)
    return NightlyEval(results_url=results_url, evaluated=runs, trend_plots=plots)
