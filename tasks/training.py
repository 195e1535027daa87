"""Tasks for training and evaluation: launch torchrun, evaluate a checkpoint."""

from __future__ import annotations

from prefect import get_run_logger, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE

from pretrain_core.evaluate.evaluator import EvalResult, evaluate_checkpoint
from pretrain_core.train.checkpoint import completed_checkpoints
from pretrain_core.train.config import EvalConfig, TrainConfig
from pretrain_core.train.launch import run_torchrun, torchrun_command, write_config


@task(cache_policy=NO_CACHE, task_run_name="torchrun-{cfg.nproc_per_node}x{cfg.nnodes}")
def launch_training(cfg: TrainConfig, timeout_s: float | None = None) -> list[str]:
    """Run training under torchrun (it resumes from the newest checkpoint); return the completed checkpoints."""
    env = {"OMP_NUM_THREADS": str(cfg.num_threads), "OMP_WAIT_POLICY": "PASSIVE"}
    code = run_torchrun(torchrun_command(cfg, write_config(cfg)), env, timeout_s)
    if code != 0:
        raise RuntimeError(f"torchrun exited with code {code}; see the task log for the workers' output")
    checkpoints = [url for _, url in completed_checkpoints(cfg.output_url)]
    get_run_logger().info("training finished: %d checkpoints under %s", len(checkpoints), cfg.output_url)
    return checkpoints


@task(cache_policy=NO_CACHE, task_run_name="evaluate-{checkpoint_url}")
def evaluate(checkpoint_url: str, tokens_url: str, tokenizer_url: str, cfg: EvalConfig) -> EvalResult:
    """Evaluate one checkpoint; show per-domain perplexities as a table and the samples as markdown."""
    result = evaluate_checkpoint(checkpoint_url, tokens_url, tokenizer_url, cfg)
    rows = [
        {"split": split, "domain": domain, "perplexity": round(m.perplexity, 2), "tokens": m.tokens}
        for split, res in result.splits.items()
        for domain, m in [("all", res.overall), *res.domains.items()]
        if m is not None
    ]
    create_table_artifact(
        key=f"eval-step-{result.step}", table=rows, description=f"Perplexity of {checkpoint_url} (step {result.step})"
    )
    samples = "\n\n".join(f"**{s.mode}** `{s.prompt!r}` → {s.completion!r}" for s in result.samples)
    create_markdown_artifact(
        key=f"samples-step-{result.step}", markdown=f"# Samples at step {result.step}\n\n{samples}"
    )
    return result
