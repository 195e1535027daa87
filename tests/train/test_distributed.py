from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from pretrain_core import storage
from pretrain_core.train.checkpoint import latest_checkpoint, load_model
from pretrain_core.train.config import TrainConfig
from pretrain_core.train.distributed import DistEnv, all_reduce_sum, any_rank, clip_grad_norm, init_distributed
from pretrain_core.train.launch import run_torchrun, torchrun_command, write_config
from pretrain_core.train.model import GPT, ModelArgs, cross_entropy
from pretrain_core.train.trainer import train

ENV = {"OMP_NUM_THREADS": "1"}


def _torchrun_then_single_process(
    config: TrainConfig, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Train ``config`` on 2 ranks under torchrun, then in one process with the same global batch."""
    config_path = write_config(config)
    assert TrainConfig.model_validate(storage.read_json(config_path)) == config
    with caplog.at_level(logging.INFO, logger="pretrain_core.train.launch"):
        rc = run_torchrun(torchrun_command(config, config_path), env=ENV, timeout_s=300)
    assert rc == 0, caplog.text
    for rank in (0, 1):
        assert f"rank {rank}/2 finished: completed at step {config.max_steps}" in caplog.text
    summary = storage.read_json(storage.join(config.output_url, "train_summary.json"))
    single_config = config.model_copy(
        update={"nproc_per_node": 1, "micro_batch_size": 2 * config.micro_batch_size, "output_url": str(tmp_path / "1")}
    )
    return summary, train(single_config).summary


def test_two_process_ddp_over_gloo_matches_one_process_with_the_same_global_batch(
    tiny_config: Callable[..., TrainConfig], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = tiny_config(nproc_per_node=2, backend="gloo", max_steps=4, checkpoint_every=2)
    summary, single = _torchrun_then_single_process(config, tmp_path, caplog)
    checkpoint = latest_checkpoint(config.output_url)
    assert checkpoint is not None and checkpoint.endswith("step-00000004")
    manifest = storage.read_json(storage.join(checkpoint, "manifest.json"))
    assert {"rng-rank-00000.pt", "rng-rank-00001.pt"} <= set(manifest["files"])
    assert summary["world_size"] == 2 and summary["tokens_seen"] == 4 * 2 * 4 * 2 * 32
    # ranks read disjoint halves of each global batch and DDP averages their gradients: same model as one process
    assert single["final_train_loss"] == pytest.approx(summary["final_train_loss"], rel=1e-4)
    assert single["final_validation_loss"] == pytest.approx(summary["final_validation_loss"], rel=1e-4)


@pytest.mark.slow
def test_two_process_fsdp_shards_trains_and_consolidates_its_checkpoint(
    tiny_config: Callable[..., TrainConfig], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = tiny_config(nproc_per_node=2, backend="gloo", strategy="fsdp", max_steps=4)
    summary, single = _torchrun_then_single_process(config, tmp_path, caplog)
    assert single["final_validation_loss"] == pytest.approx(summary["final_validation_loss"], rel=1e-4)
    model, meta = load_model(summary["checkpoint_url"])  # full weights, loadable without a process group
    assert meta["world_size"] == 2 and model.num_params() == single["num_params"]


def test_single_process_needs_no_process_group() -> None:
    env = init_distributed("auto")
    assert env == DistEnv(rank=0, local_rank=0, world_size=1, device=env.device) and env.is_main
    assert all_reduce_sum([1.5, 2.0], env) == [1.5, 2.0]
    assert any_rank(True, env) and not any_rank(False, env)


def test_clip_grad_norm_reports_the_norm_before_clipping() -> None:
    torch.manual_seed(0)
    model = GPT(ModelArgs(vocab_size=30, n_layer=1, n_head=2, d_model=16, max_seq_len=8))
    batch = torch.randint(0, 30, (2, 9))
    (cross_entropy(model(batch[:, :-1]), batch[:, 1:]) * 1000).backward()
    norm = clip_grad_norm(model, 1.0)
    after = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in model.parameters() if p.grad is not None]))
    assert norm > 10 and after.item() == pytest.approx(1.0, rel=1e-4)
    assert clip_grad_norm(model, 0.0) == pytest.approx(1.0, rel=1e-4)  # 0 measures without clipping
