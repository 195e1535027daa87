from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from pretrain_core import storage
from pretrain_core.train.checkpoint.catalog import latest_checkpoint
from pretrain_core.train.checkpoint.store import load_model
from pretrain_core.train.config import TrainConfig
from pretrain_core.train.launch.torchrun import run_torchrun, torchrun_command, write_config
from pretrain_core.train.model.gpt import GPT, ModelArgs, cross_entropy
from pretrain_core.train.parallel.distributed import DistEnv, all_reduce_sum, clip_grad_norm, init_distributed
from pretrain_core.train.trainer import train

ENV = {"OMP_NUM_THREADS": "1"}


def _torchrun_then_single_process(
    config: TrainConfig, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Train ``config`` on 2 ranks under torchrun, then in one process with the same global batch."""
    config_path = write_config(config)
    assert TrainConfig.model_validate(storage.read_json(config_path)) == config
    with caplog.at_level(logging.INFO, logger="pretrain_core.train.launch.torchrun"):
        rc = run_torchrun(torchrun_command(config, config_path), env=ENV, timeout_s=300)
    assert rc == 0, caplog.text
    for rank in (0, 1):
        assert f"rank {rank}/2 finished: completed at step {config.max_steps}" in caplog.text
    summary = storage.read_json(storage.join(config.output_url, "train_summary.json"))
    single_config = config.updated(
        **{
            "nproc_per_node": 1,
            "micro_batch_size": 2 * config.data.micro_batch_size,
            "output_url": str(tmp_path / "1"),
        }
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
    assert {"rng-rank-00000.json", "rng-rank-00001.json", "state/index.json"} <= set(manifest["files"])
    # DDP's replicated tensors are written once, the writes spread over both ranks: no rank writes it all
    assert sorted(storage.names_in(storage.join(checkpoint, "state"))) == ["__0_0.distcp", "__1_0.distcp", "index.json"]
    assert summary["world_size"] == 2 and summary["tokens_seen"] == 4 * 2 * 4 * 2 * 32
    # ranks read disjoint halves of each global batch and DDP averages their gradients: same model as one process
    assert single["final_train_loss"] == pytest.approx(summary["final_train_loss"], rel=1e-4)
    assert single["final_validation_loss"] == pytest.approx(summary["final_validation_loss"], rel=1e-4)


@pytest.mark.slow
def test_two_process_fsdp_shards_trains_and_consolidates_its_checkpoint(
    tiny_config: Callable[..., TrainConfig], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = tiny_config(nproc_per_node=2, backend="gloo", strategy="fsdp", max_steps=4, grad_check_every=2)
    summary, single = _torchrun_then_single_process(config, tmp_path, caplog)
    checks = [line for line in caplog.text.splitlines() if "[torchrun]" in line and "gradient check at step" in line]
    assert len(checks) == 2 and all("FAILED" not in line for line in checks), (
        caplog.text
    )  # rank 0's, not the 1-rank run's
    assert single["final_validation_loss"] == pytest.approx(summary["final_validation_loss"], rel=1e-4)
    model, meta = load_model(summary["checkpoint_url"])  # full weights, loadable without a process group
    assert meta["world_size"] == 2 and model.num_params() == single["num_params"]


def test_two_process_tensor_parallel_matches_the_unsharded_model(
    tiny_config: Callable[..., TrainConfig], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Each block's heads and MLP split over 2 ranks (DTensor over gloo), both ranks on the same batch: the same
    losses as one process training the whole model, a gradient check on the gathered weights, and a checkpoint
    that loads without a process group."""
    config = tiny_config(
        nproc_per_node=2, tensor_parallel=2, backend="gloo", max_steps=4, checkpoint_every=2, grad_check_every=2
    )
    assert config.tokens_per_step == 4 * 2 * 32  # one data-parallel replica: the batch of one process
    with caplog.at_level(logging.INFO, logger="pretrain_core.train.launch.torchrun"):
        assert run_torchrun(torchrun_command(config, write_config(config)), env=ENV, timeout_s=300) == 0, caplog.text
    checks = [line for line in caplog.text.splitlines() if "gradient check at step" in line]
    assert len(checks) == 2 and all("FAILED" not in line for line in checks), caplog.text
    sharded = storage.read_json(storage.join(config.output_url, "train_summary.json"))
    whole = train(config.updated(**{"nproc_per_node": 1, "tensor_parallel": 1, "output_url": str(tmp_path / "1")}))
    assert sharded["final_train_loss"] == pytest.approx(whole.summary["final_train_loss"], rel=1e-4)
    assert sharded["final_validation_loss"] == pytest.approx(whole.summary["final_validation_loss"], rel=1e-4)
    model, meta = load_model(sharded["checkpoint_url"])  # consolidated: plain tensors, any world size
    reference, _ = load_model(whole.summary["checkpoint_url"])
    assert meta["world_size"] == 2 and all(
        torch.allclose(a, b, atol=1e-5)
        for a, b in zip(model.state_dict().values(), reference.state_dict().values(), strict=True)
    )


@pytest.mark.slow
def test_four_processes_on_a_2d_mesh_fsdp_by_tensor_parallel_match_one_process(
    tiny_config: Callable[..., TrainConfig], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """2 data-parallel replicas (FSDP2) x 2 tensor-parallel ranks: one process with the same global batch."""
    config = tiny_config(nproc_per_node=4, tensor_parallel=2, strategy="fsdp", backend="gloo", max_steps=4)
    with caplog.at_level(logging.INFO, logger="pretrain_core.train.launch.torchrun"):
        assert run_torchrun(torchrun_command(config, write_config(config)), env=ENV, timeout_s=300) == 0, caplog.text
    sharded = storage.read_json(storage.join(config.output_url, "train_summary.json"))
    single = config.updated(**{"nproc_per_node": 1, "tensor_parallel": 1, "strategy": "ddp", "micro_batch_size": 8,
                "output_url": str(tmp_path / "1")})  # fmt: skip
    whole = train(single).summary
    assert sharded["tokens_seen"] == whole["tokens_seen"]
    assert sharded["final_validation_loss"] == pytest.approx(whole["final_validation_loss"], rel=1e-4)


def test_single_process_needs_no_process_group() -> None:
    env = init_distributed("auto")
    assert env == DistEnv(rank=0, local_rank=0, world_size=1, device=env.device) and env.is_main
    assert all_reduce_sum([1.5, 2.0], env) == [1.5, 2.0]


def test_clip_grad_norm_reports_the_norm_before_clipping() -> None:
    torch.manual_seed(0)
    model = GPT(ModelArgs(vocab_size=30, n_layer=1, n_head=2, d_model=16, max_seq_len=8))
    batch = torch.randint(0, 30, (2, 9))
    (cross_entropy(model(batch[:, :-1]), batch[:, 1:]) * 1000).backward()
    norm = clip_grad_norm(model, 1.0)
    after = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in model.parameters() if p.grad is not None]))
    assert norm > 10 and after.item() == pytest.approx(1.0, rel=1e-4)
    assert clip_grad_norm(model, 0.0) == pytest.approx(1.0, rel=1e-4)  # 0 measures without clipping
