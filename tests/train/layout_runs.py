"""Runs of one config under torchrun on gloo and the same run in one process with the whole model: what the
tests of each parallel layout compare."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
import torch

from pretrain_core import storage
from pretrain_core.train.checkpoint.store import load_model
from pretrain_core.train.config import TrainConfig
from pretrain_core.train.launch.torchrun import run_torchrun, torchrun_command, write_config
from pretrain_core.train.trainer import train

ENV = {"OMP_NUM_THREADS": "1"}
UNSPLIT = {
    "nproc_per_node": 1, "pipeline_parallel": 1, "tensor_parallel": 1, "context_parallel": 1, "strategy": "ddp",
    "pipeline_schedule": "1f1b", "pipeline_virtual_stages": None, "pipeline_microbatches": None,
    "pipeline_layers_per_stage": None, "expert_parallel": 1,
}  # fmt: skip


def torchrun_summary(config: TrainConfig, caplog: pytest.LogCaptureFixture) -> dict[str, Any]:
    with caplog.at_level(logging.INFO, logger="pretrain_core.train.launch.torchrun"):
        assert run_torchrun(torchrun_command(config, write_config(config)), env=ENV, timeout_s=300) == 0, caplog.text
    summary: dict[str, Any] = storage.read_json(storage.join(config.output_url, "train_summary.json"))
    return summary


def unsplit(config: TrainConfig, output_url: str, **overrides: Any) -> TrainConfig:
    """The same run in one process (validated): the same global batch, the whole model."""
    batch = config.data.micro_batch_size * config.data_parallel_size
    values = {**config.model_dump(), **UNSPLIT, "micro_batch_size": batch, "output_url": output_url, **overrides}
    return TrainConfig(**values)


def run_both_ways(
    config: TrainConfig, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Train ``config`` under torchrun and unsplit in one process; assert the two end on the same training and
    validation loss; return both summaries."""
    split = torchrun_summary(config, caplog)
    whole = train(unsplit(config, str(tmp_path / "whole"))).summary
    assert split["final_train_loss"] == pytest.approx(whole["final_train_loss"], rel=1e-5)
    assert split["final_validation_loss"] == pytest.approx(whole["final_validation_loss"], rel=1e-5)
    return split, whole


def same_weights(a: str, b: str) -> bool:
    split, _ = load_model(a)
    whole, _ = load_model(b)
    return all(
        torch.allclose(x, y, atol=1e-5)
        for x, y in zip(split.state_dict().values(), whole.state_dict().values(), strict=True)
    )
