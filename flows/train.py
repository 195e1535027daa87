"""train: launch training under torchrun, announce its checkpoints, evaluate every checkpoint it committed.

`train` is the flow ops launch by hand (a deployment's typed form); `train_from_config` trains a pipeline
config's corpus (the `pretrain train` command); `train_and_evaluate` is the pipeline's training node.
"""

from __future__ import annotations

from prefect import flow, unmapped

from pretrain_core.config import PipelineConfig, load_config
from pretrain_core.evaluate.evaluator import EvalResult
from pretrain_core.pipeline import training_config
from pretrain_core.train.params import TrainRunParams
from tasks.slots import hold_slot
from tasks.training import evaluate, launch_training


@flow(name="train-and-evaluate", log_prints=True)
def train_and_evaluate(cfg: PipelineConfig) -> list[EvalResult]:
    train_cfg = training_config(cfg)
    checkpoints = launch_training(train_cfg, evaluate_with=cfg.evaluate)  # evaluated as they land, then reused
    evaluations = evaluate.map(
        checkpoints, unmapped(train_cfg.data.tokens_url), unmapped(train_cfg.data.tokenizer_url), unmapped(cfg.evaluate)
    )
    return list(evaluations.result())


@flow(name="train", flow_run_name="{params.run_name}", log_prints=True)
def train_run(
    params: TrainRunParams, concurrency_limit: str | None = None, strict_concurrency: bool = False
) -> list[str]:
    """Train with the given settings; each completed checkpoint is announced as a `pretrain.checkpoint.saved`
    event about `pretrain.run.<run_name>` (payload: checkpoint_url, step). Returns the completed checkpoints.

    Args:
        params: what to train, on which token shards, where to write.
        concurrency_limit: a Prefect global concurrency limit (e.g. `pretrain-gpu`) to hold one slot of while
            training, so runs sharing the accelerators queue; unset: no throttling. The slot is a lease: a flow
            process killed outright gives it back within about 75 s.
        strict_concurrency: fail when that limit does not exist, instead of training unthrottled with a warning.
    """
    cfg = params.to_train_config()
    with hold_slot(concurrency_limit, strict_concurrency):
        return launch_training(cfg, timeout_s=params.timeout_s, run_name=params.run_name)


@flow(name="train-from-config", log_prints=True)
def train(config_path: str | None = None, overrides: list[str] | None = None) -> list[EvalResult]:
    """Train on the token shards of a finished corpus run and evaluate each checkpoint.

    Args:
        config_path: pipeline YAML; the embedded demo config when empty.
        overrides: dotted overrides such as `train.max_steps=2000`.
    """
    return train_and_evaluate(load_config(config_path, overrides))
