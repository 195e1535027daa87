"""Where a run starts from: whether it already finished, whether its newest checkpoint may be resumed under this
config, and the config of a run starting from another run's weights (`init_from`)."""

from __future__ import annotations

import logging
from typing import Any

from pretrain_core import storage
from pretrain_core.train.checkpoint.catalog import read_meta, saved_setting
from pretrain_core.train.config import TrainConfig

log = logging.getLogger(__name__)


def completed_run(config: TrainConfig) -> dict[str, Any] | None:
    """The run's summary when it already trained to `max_steps` under this exact config (a rerun has nothing to do).

    A stopped run, a different config, or a missing summary returns None, so the launch resumes from the newest
    checkpoint instead.
    """
    summary_url = storage.join(config.output_url, "train_summary.json")
    config_url = storage.join(config.output_url, "train_config.json")
    if not (storage.exists(summary_url) and storage.exists(config_url)):
        return None
    summary: dict[str, Any] = storage.read_json(summary_url)
    same_config = storage.read_json(config_url) == config.model_dump(mode="json")
    done = summary.get("status") == "completed" and summary.get("steps") == config.max_steps
    return summary if same_config and done else None


def check_resumable(url: str, config: TrainConfig, train_data_sha256: str) -> None:
    """Refuse to continue a checkpoint whose global batch or training data changed since (unless told to):
    the data position and the schedule would go on from numbers that no longer mean the same thing."""
    meta = read_meta(url)
    saved_batch = 1
    for key in ("seq_len", "micro_batch_size", "grad_accum_steps", "nproc_per_node", "nnodes"):
        saved_batch *= int(saved_setting(meta, key, 1))
    for key in ("tensor_parallel", "pipeline_parallel", "context_parallel"):
        saved_batch //= int(saved_setting(meta, key, 1))
    changes = []
    if saved_batch != config.tokens_per_step:
        changes.append(f"the global batch went from {saved_batch:,} to {config.tokens_per_step:,} tokens per step")
    if meta.get("train_data_sha256") not in (None, train_data_sha256):
        changes.append(f"the training sequences under {config.data.tokens_url} are not the ones it was trained on")
    if not changes:
        return
    if not config.checkpoint.resume_despite_changes:
        raise ValueError(
            f"{url} cannot be resumed as it is: {'; '.join(changes)}. Use a new output_url, or set "
            "resume_despite_changes: true to continue anyway"
        )
    log.warning("resuming %s despite changes: %s", url, "; ".join(changes))


def extending(config: TrainConfig, meta: dict[str, Any]) -> TrainConfig:
    """The config of a run starting from a checkpoint: RoPE scaling stretches from the length that checkpoint was
    first trained at, unless the config says otherwise."""
    if config.model.rope_original_seq_len is not None:
        return config
    args = meta["model_args"]
    original = args.get("rope_original_seq_len") or args["max_seq_len"]
    return config.updated(rope_original_seq_len=original)
