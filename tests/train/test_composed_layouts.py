"""Layouts that compose several parallelisms, as torchtitan composes them: context parallelism beside tensor and
pipeline parallelism, the 3-D pp x dp x tp mesh on 8 gloo ranks and the 4-D pp x dp x cp x tp one on 16. Each run
ends on the losses, validation and checkpointed weights of one process with the whole model and batch."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from pretrain_core.train.config import TrainConfig
from pretrain_core.train.model.gpt import GPT, ModelArgs, cross_entropy
from pretrain_core.train.parallel.rng import heads_region, split_heads_rng
from pretrain_core.train.trainer import train
from tests.train.layout_runs import run_both_ways, same_weights, torchrun_summary, unsplit


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize(
    "layout",
    [
        {"nproc_per_node": 4, "context_parallel": 2, "tensor_parallel": 2},
        {"nproc_per_node": 4, "context_parallel": 2, "pipeline_parallel": 2},
        {"nproc_per_node": 8, "pipeline_parallel": 2, "tensor_parallel": 2, "strategy": "fsdp"},
        {"nproc_per_node": 16, "pipeline_parallel": 2, "context_parallel": 2, "tensor_parallel": 2, "strategy": "fsdp"},
    ],
    ids=["cp2-x-tp2", "pp2-x-cp2", "3d-pp2-dp2-tp2", "4d-pp2-dp2-cp2-tp2"],
)
def test_composed_layouts_match_one_process(
    tiny_config: Callable[..., TrainConfig], tmp_path: Path, caplog: pytest.LogCaptureFixture, layout: dict[str, Any]
) -> None:
    config = tiny_config(backend="gloo", max_steps=4, **layout)
    assert config.layout.world_size == layout["nproc_per_node"]
    split, whole = run_both_ways(config, tmp_path, caplog)
    assert split["tokens_seen"] == whole["tokens_seen"]
    assert same_weights(split["checkpoint_url"], whole["checkpoint_url"])


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_compiled_pipeline_compiles_each_stage_and_matches_one_process(
    tiny_config: Callable[..., TrainConfig], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Compile under pipeline parallelism: each stage's blocks compiled once the model is cut (aot_eager: the same
    kernels as eager, without inductor's minute of code generation)."""
    config = tiny_config(
        nproc_per_node=2, pipeline_parallel=2, backend="gloo", max_steps=4, compile=True, compile_backend="aot_eager"
    )
    run_both_ways(config, tmp_path, caplog)
    assert "blocks of a pipeline stage compiled with torch.compile (backend aot_eager)" in caplog.text  # rank 0's


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize(
    "layout",
    [
        {"nproc_per_node": 2, "tensor_parallel": 2},
        {
            "nproc_per_node": 2,
            "tensor_parallel": 2,
            "block": "llama",
            "moe_shared_expert": True,
            "moe_router": "sigmoid",
        },
        {"nproc_per_node": 4, "tensor_parallel": 2, "strategy": "fsdp"},
        {"nproc_per_node": 2, "context_parallel": 2},
    ],
    ids=["moe-tp2", "moe-tp2-swiglu-shared", "moe-tp2-x-dp2-fsdp", "moe-cp2"],
)
def test_a_mixture_of_experts_under_tensor_or_context_parallelism_matches_one_process(
    tiny_config: Callable[..., TrainConfig], tmp_path: Path, caplog: pytest.LogCaptureFixture, layout: dict[str, Any]
) -> None:
    """Each expert split by hidden units over the tensor-parallel group (the router replicated), or the sequences
    over a context group; the expert loads counted over every replica's tokens, as one process counts them."""
    config = tiny_config(backend="gloo", max_steps=4, moe_experts=4, moe_top_k=2, **layout)
    split, whole = run_both_ways(config, tmp_path, caplog)
    assert same_weights(split["checkpoint_url"], whole["checkpoint_url"])


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("balance", ["loss", "bias"])
def test_a_mixture_of_experts_inside_pipeline_stages_matches_one_process_with_the_same_microbatches(
    tiny_config: Callable[..., TrainConfig], tmp_path: Path, caplog: pytest.LogCaptureFixture, balance: str
) -> None:
    """Experts inside pipeline stages: each layer's balancing loss joins backward where the layer is (no stage
    but the last has the schedule's loss), so the first stage's routers train on theirs. Balancing is per forward,
    so one process matches when its micro-batches are the pipeline's microbatches: 2 rows, 4 per step."""
    config = tiny_config(
        nproc_per_node=2, pipeline_parallel=2, backend="gloo", max_steps=4, moe_experts=4, moe_balance=balance
    )
    assert (config.data.micro_batch_size, config.parallelism.microbatches, config.data.grad_accum_steps) == (4, 2, 2)
    split = torchrun_summary(config, caplog)
    same_rows = unsplit(config, str(tmp_path / "whole"), micro_batch_size=2, grad_accum_steps=4, eval_batches=4)
    whole = train(same_rows).summary
    assert split["final_train_loss"] == pytest.approx(whole["final_train_loss"], rel=1e-5)
    assert split["final_validation_loss"] == pytest.approx(whole["final_validation_loss"], rel=1e-5)
    assert same_weights(split["checkpoint_url"], whole["checkpoint_url"])


def test_what_still_cannot_compose_is_refused_naming_why(tiny_config: Callable[..., TrainConfig]) -> None:
    with pytest.raises(ValueError, match="expert_parallel 2 does not combine with tensor or pipeline parallelism"):
        tiny_config(nproc_per_node=4, tensor_parallel=2, expert_parallel=2, moe_experts=4)


def test_each_rank_drops_its_own_heads_while_the_shared_stream_stays_in_step() -> None:
    """Two tensor-parallel ranks (offsets 0 and 1) start from the same default generator: inside the heads region
    their draws differ, after it their default streams are where each other's are; no fork without dropout."""
    draws, after = [], []
    for offset in (0, 1):
        torch.manual_seed(5)
        with split_heads_rng(offset), heads_region(0.1):
            draws.append(torch.rand(6))
        after.append(torch.rand(6))
    assert not torch.equal(draws[0], draws[1]) and torch.equal(after[0], after[1])
    torch.manual_seed(5)
    with split_heads_rng(1), heads_region(0.0):
        undropped = torch.rand(6)
    torch.manual_seed(5)
    assert torch.equal(undropped, torch.rand(6))  # the default stream itself: nothing forked, nothing drawn


def test_recomputed_blocks_draw_the_masks_they_drew_forward() -> None:
    """Activation checkpointing recomputes each block in backward: its heads' dropout masks come from a seed drawn
    from the default stream, which the recomputation restores, so gradients equal those without recomputation."""
    grads = []
    for recompute in (False, True):
        torch.manual_seed(0)
        model = GPT(ModelArgs(vocab_size=40, n_layer=2, n_head=4, d_model=32, max_seq_len=16, dropout=0.3))
        model.activation_checkpointing = recompute
        ids = torch.randint(0, 40, (2, 17), generator=torch.Generator().manual_seed(1))
        torch.manual_seed(7)
        with split_heads_rng(1):
            cross_entropy(model(ids[:, :-1]), ids[:, 1:]).backward()
        grads.append({name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None})
    assert grads[0].keys() == grads[1].keys()
    assert all(torch.equal(grads[0][name], grads[1][name]) for name in grads[0])


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_dropout_under_tensor_parallelism_trains_and_resumes_exactly(
    tiny_config: Callable[..., TrainConfig], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """TP 2 with dropout: a run stopped at step 2 and resumed ends on the uninterrupted run's losses (the masks
    come from the checkpointed default stream), and dropout is really on (another loss than without it)."""
    steady = {"lr_schedule": "constant", "warmup_steps": 0, "checkpoint_every": 2}
    layout = {"nproc_per_node": 2, "tensor_parallel": 2, "backend": "gloo", **steady}
    straight = torchrun_summary(tiny_config(max_steps=4, dropout=0.2, **layout), caplog)
    resumed_url = str(tmp_path / "resumed")
    torchrun_summary(tiny_config(max_steps=2, dropout=0.2, output_url=resumed_url, **layout), caplog)
    resumed = torchrun_summary(tiny_config(max_steps=4, dropout=0.2, output_url=resumed_url, **layout), caplog)
    plain = torchrun_summary(tiny_config(max_steps=4, output_url=str(tmp_path / "plain"), **layout), caplog)
    assert resumed["final_train_loss"] == pytest.approx(straight["final_train_loss"], rel=1e-6)
    assert resumed["final_validation_loss"] == pytest.approx(straight["final_validation_loss"], rel=1e-6)
    assert straight["final_train_loss"] != pytest.approx(plain["final_train_loss"], rel=1e-3)
