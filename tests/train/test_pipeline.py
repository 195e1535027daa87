"""Pipeline parallelism: stages cut from the whole model, the layout rules, and runs over gloo whose losses,
validation and checkpoints equal one process training the whole model."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from pydantic import ValidationError

from pretrain_core import storage
from pretrain_core.train.checkpoint.catalog import latest_checkpoint
from pretrain_core.train.config import TrainConfig
from pretrain_core.train.model.gpt import GPT, ModelArgs
from pretrain_core.train.parallel.layout import Layout, split_layers
from pretrain_core.train.parallel.pipeline import model_part
from pretrain_core.train.trainer import train
from tests.train.layout_runs import run_both_ways, same_weights, torchrun_summary, unsplit


def test_a_stage_keeps_its_blocks_names_and_values_and_passes_hidden_states_on() -> None:
    torch.manual_seed(0)
    model = GPT(ModelArgs(vocab_size=30, n_layer=4, n_head=2, d_model=16, max_seq_len=8)).eval()
    ranges = split_layers(4, 2)
    first, last = model_part(model, ranges[0], True, False), model_part(model, ranges[1], False, True)
    assert list(first.state_dict()) == ["embed.weight", *[k for k in model.state_dict() if k.startswith("blocks.0.")],
                                        *[k for k in model.state_dict() if k.startswith("blocks.1.")]]  # fmt: skip
    assert "lm_head.weight" in last.state_dict() and "embed.weight" not in last.state_dict()
    assert last.blocks["3"] is model.blocks["3"]  # shared, not copied
    ids = torch.randint(0, 30, (2, 8))
    hidden = first(ids)
    assert hidden.shape == (2, 8, 16)
    assert torch.equal(last(hidden), model(ids))


def test_layers_split_as_even_as_they_go_or_as_given() -> None:
    assert split_layers(7, 3) == [range(0, 3), range(3, 5), range(5, 7)]
    assert split_layers(6, 2, [1, 5]) == [range(0, 1), range(1, 6)]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"nproc_per_node": 3, "pipeline_parallel": 2}, "pipeline_parallel 2 x context_parallel 1 x tensor_parallel 1"),
        ({"nproc_per_node": 2, "pipeline_parallel": 2, "pipeline_microbatches": 1}, "fewer than the 2 stages"),
        ({"nproc_per_node": 2, "pipeline_parallel": 2, "micro_batch_size": 3}, "does not split into 2 microbatches"),
        ({"nproc_per_node": 4, "pipeline_parallel": 2}, "needs strategy fsdp"),
        ({"nproc_per_node": 2, "pipeline_parallel": 2, "pipeline_layers_per_stage": [2, 1]}, "at least one of the 2"),
        ({"nproc_per_node": 2, "pipeline_parallel": 2, "pipeline_schedule": "interleaved-1f1b"}, "2 blocks do not"),
        ({"nproc_per_node": 2, "pipeline_parallel": 2, "precision": "fp16"}, "does not support precision fp16"),
        ({"pipeline_virtual_stages": 2}, "need pipeline_parallel > 1"),
    ],
)
def test_a_layout_that_cannot_run_is_one_line_error_before_any_process_starts(
    tiny_config: Callable[..., TrainConfig], overrides: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        tiny_config(backend="gloo", **overrides)


def test_layout_degrees_multiply_to_the_world_size() -> None:
    assert Layout(8, pp=2, tp=2).dp == 2 and not Layout(8, pp=2, tp=2).problems()
    assert Layout(6, pp=4).problems()


def test_two_stage_pipeline_trains_validates_and_checkpoints_as_the_whole_model(
    tiny_config: Callable[..., TrainConfig], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """1F1B over 2 ranks (rank 0: embedding and block 0; rank 1: block 1, head, loss): the same losses, validation
    and weights as one process; the checkpoints, written in the background, load whole without a process group."""
    config = tiny_config(
        nproc_per_node=2, pipeline_parallel=2, backend="gloo", max_steps=4, checkpoint_every=2, async_checkpoints=True
    )
    split, whole = run_both_ways(config, tmp_path, caplog)
    assert split["tokens_seen"] == whole["tokens_seen"] and split["num_params"] == whole["num_params"]
    assert same_weights(split["checkpoint_url"], whole["checkpoint_url"])


def test_checkpoints_resume_across_pipeline_and_unsplit_layouts(
    tiny_config: Callable[..., TrainConfig], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """One process trains to step 3 and stops; a 2-stage pipeline resumes its checkpoint to step 6: the same
    final loss as one uninterrupted process (the tied head's optimizer state is read from the embedding's)."""
    config = tiny_config(nproc_per_node=2, pipeline_parallel=2, backend="gloo", max_steps=6, checkpoint_every=3)
    uninterrupted = train(unsplit(config, str(tmp_path / "whole"))).summary
    first_half = train(unsplit(config, config.output_url))
    storage.remove(storage.join(config.output_url, "checkpoints", "step-00000006"))
    storage.remove(storage.join(config.output_url, "train_summary.json"))
    assert first_half.step == 6 and latest_checkpoint(config.output_url) is not None
    resumed = torchrun_summary(config, caplog)
    assert "resuming from" in caplog.text and "at step 3" in caplog.text
    assert resumed["final_train_loss"] == pytest.approx(uninterrupted["final_train_loss"], rel=1e-5)
    assert resumed["final_validation_loss"] == pytest.approx(uninterrupted["final_validation_loss"], rel=1e-5)


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize(
    "layout",
    [
        {"pipeline_schedule": "gpipe"},
        {"pipeline_schedule": "interleaved-1f1b", "n_layer": 4},
        {"pipeline_schedule": "zero-bubble", "n_layer": 4, "pipeline_layers_per_stage": [1, 1, 1, 1]},
    ],
    ids=["gpipe", "interleaved-1f1b", "zero-bubble"],
)
def test_every_schedule_matches_the_whole_model(
    tiny_config: Callable[..., TrainConfig], tmp_path: Path, caplog: pytest.LogCaptureFixture, layout: dict[str, Any]
) -> None:
    config = tiny_config(nproc_per_node=2, pipeline_parallel=2, backend="gloo", max_steps=4, **layout)
    run_both_ways(config, tmp_path, caplog)


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("layout", [{"strategy": "fsdp"}, {"tensor_parallel": 2}], ids=["pp2-x-dp2-fsdp", "pp2-x-tp2"])
def test_four_ranks_pipeline_by_data_or_tensor_parallel_match_the_whole_model(
    tiny_config: Callable[..., TrainConfig], tmp_path: Path, caplog: pytest.LogCaptureFixture, layout: dict[str, Any]
) -> None:
    """PP 2 x DP 2 (each stage FSDP2-sharded over 2 replicas reading different halves of the batch) and PP 2 x
    TP 2 (each stage's heads split over 2 ranks) on a named (pp, dp, cp, tp) mesh: the losses and the
    checkpointed weights of one process with the same global batch."""
    config = tiny_config(nproc_per_node=4, pipeline_parallel=2, backend="gloo", max_steps=4, **layout)
    split, whole = run_both_ways(config, tmp_path, caplog)
    assert split["tokens_seen"] == whole["tokens_seen"]
    assert same_weights(split["checkpoint_url"], whole["checkpoint_url"])
