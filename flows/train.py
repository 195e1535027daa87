"""train: launch training under torchrun, then evaluate every checkpoint it committed as a downstream node."""

from __future__ import annotations

from prefect import flow, unmapped

from pretrain_core.config import PipelineConfig, load_config
from pretrain_core.evaluate.evaluator import EvalResult
from pretrain_core.pipeline import training_config
from tasks.training import evaluate, launch_training


@flow(name="train-and-evaluate", log_prints=True)
def train_and_evaluate(cfg: PipelineConfig) -> list[EvalResult]:
    train_cfg = training_config(cfg)
    checkpoints = launch_training(train_cfg)
    evaluations = evaluate.map(
        checkpoints, unmapped(train_cfg.tokens_url), unmapped(train_cfg.tokenizer_url), unmapped(cfg.evaluate)
    )
    return list(evaluations.result())


@flow(name="train", log_prints=True)
def train(config_path: str | None = None, overrides: list[str] | None = None) -> list[EvalResult]:
    """Train on the token shards of a finished corpus run and evaluate each checkpoint.

    Args:
        config_path: pipeline YAML; the embedded demo config when empty.
        overrides: dotted overrides such as `train.max_steps=2000`.
    """
    return train_and_evaluate(load_config(config_path, overrides))
