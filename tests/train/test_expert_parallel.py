"""Expert parallelism: each rank holds some experts of every MoE layer and the routed tokens travel by all-to-all;
training equals one process with every expert (on gloo), and checkpoints hold each expert once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pretrain_core import storage
from pretrain_core.train.checkpoint.catalog import latest_checkpoint
from pretrain_core.train.checkpoint.dcp_format import saved_tensors
from pretrain_core.train.checkpoint.store import STATE_DIR
from pretrain_core.train.config import TrainConfig
from tests.train.layout_runs import run_both_ways, same_weights

MOE = {"moe_experts": 4, "moe_top_k": 2, "backend": "gloo", "max_steps": 4, "checkpoint_every": 4}


def _experts_saved(config: TrainConfig) -> set[str]:
    url = latest_checkpoint(config.output_url)
    assert url is not None
    names = saved_tensors(storage.join(url, STATE_DIR))
    return {name.split(".experts.")[1].split(".")[0] for name in names if name.startswith("model.blocks.0.mlp.experts")}


def test_two_rank_expert_parallel_training_matches_one_process(
    tiny_config: Callable[..., TrainConfig], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Two experts a rank, Switch's balancing loss counted over both ranks' tokens: the losses, validation and
    final weights of one process holding all four experts, and the checkpoint holds every expert."""
    config = tiny_config(nproc_per_node=2, expert_parallel=2, **MOE)
    run_both_ways(config, tmp_path, caplog)
    assert "rank 0 holds experts 0-1" in caplog.text and "rank 1 holds experts 2-3" in caplog.text
    assert _experts_saved(config) == {"0", "1", "2", "3"}
    assert same_weights(str(latest_checkpoint(config.output_url)), str(latest_checkpoint(str(tmp_path / "whole"))))


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_expert_groups_with_replicas_and_bias_balancing_match_one_process(
    tiny_config: Callable[..., TrainConfig], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Four ranks as two expert groups of two (each expert on two replicas), sigmoid router, the
    auxiliary-loss-free bias and a shared expert: still one process's run."""
    config = tiny_config(
        nproc_per_node=4, expert_parallel=2, moe_router="sigmoid", moe_balance="bias", moe_shared_expert=True, **MOE
    )
    run_both_ways(config, tmp_path, caplog)
    assert same_weights(str(latest_checkpoint(config.output_url)), str(latest_checkpoint(str(tmp_path / "whole"))))


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"nproc_per_node": 2}, "needs moe_experts"),
        ({"nproc_per_node": 2, "moe_experts": 3, "moe_top_k": 1}, "must divide moe_experts 3"),
        ({"nproc_per_node": 3, "moe_experts": 4}, "must divide the 3 ranks"),
        ({"nproc_per_node": 2, "moe_experts": 4, "strategy": "fsdp"}, "needs strategy ddp"),
    ],
)
def test_an_expert_layout_that_cannot_run_is_refused_in_one_line(
    tiny_config: Callable[..., TrainConfig], overrides: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message) as error:
        tiny_config(expert_parallel=2, **overrides)
    assert "\n" not in str(error.value).split("\n  ")[0]
