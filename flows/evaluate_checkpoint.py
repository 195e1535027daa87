"""evaluate-checkpoint: evaluate one committed checkpoint and record it, e.g. when training announces it; earlier
checkpoints of the run still waiting are evaluated first, so a run's evaluations go in step order."""

from __future__ import annotations

from prefect import flow

from pretrain_core.evaluate.evaluator import EvalResult
from pretrain_core.evaluate.history import default_results_url
from pretrain_core.train.config import EvalConfig
from tasks.evaluation import check_checkpoint, earlier_unevaluated, record_missing_results, recorded_evaluation
from tasks.training import evaluate


@flow(name="evaluate-checkpoint", log_prints=True)
def evaluate_checkpoint_flow(
    checkpoint_url: str,
    step: int,
    tokens_url: str | None = None,
    tokenizer_url: str | None = None,
    results_url: str | None = None,
    cfg: EvalConfig | None = None,
) -> EvalResult:
    """Evaluate a checkpoint, write `eval.json` beside it and append its rows to the results table.

    Args:
        checkpoint_url: `RUNS_ROOT/RUN/checkpoints/step-NNNNNNNN`, complete (with its manifest).
        step: the checkpoint's step; a mismatch is refused (it means the caller meant another checkpoint).
        tokens_url: token shards to score; the ones the checkpoint was trained on when empty.
        tokenizer_url: the tokenizer; the checkpoint's when empty.
        results_url: Parquet results table; `RUNS_ROOT/eval_results.parquet` (shared with nightly-eval) when empty.
        cfg: evaluation settings.
    """
    if (recorded := recorded_evaluation(checkpoint_url, step)) is not None:
        record_missing_results(checkpoint_url, step, results_url)  # rows an evaluation killed after its record lost
        return recorded  # a repeated event, or done by an earlier run in step order (and maybe pruned since)
    checkpoint = check_checkpoint(checkpoint_url, step)
    pending = earlier_unevaluated(checkpoint.checkpoint_url, step + 1)  # its own too, unless already evaluated
    urls = pending if checkpoint.checkpoint_url in pending else [*pending, checkpoint.checkpoint_url]
    results = [
        evaluate(
            url, tokens_url or checkpoint.tokens_url, tokenizer_url or checkpoint.tokenizer_url, cfg or EvalConfig()
        )
        for url in urls
    ]
    # one set of rows per recorded evaluation: these, and any an earlier run recorded but was killed before adding
    record_missing_results(checkpoint.checkpoint_url, step, results_url or default_results_url(checkpoint.runs_root))
    return results[-1]
