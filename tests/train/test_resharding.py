"""A sharded checkpoint resumes at another world size and layout: DCP reshards on load, so a run may move from 2
ranks to 4 to 1, or between FSDP and tensor parallelism, and go on as if it had never moved (within the rounding
of a different reduction order)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from pretrain_core import storage
from pretrain_core.train.checkpoint.catalog import read_meta
from pretrain_core.train.config import TrainConfig
from pretrain_core.train.launch.torchrun import run_torchrun, torchrun_command, write_config
from pretrain_core.train.trainer import train

pytestmark = pytest.mark.slow  # five torchrun launches of 2 and 4 gloo ranks

ENV = {"OMP_NUM_THREADS": "1"}


def _losses(output_url: str) -> dict[int, float]:
    events = EventAccumulator(str(Path(output_url) / "tensorboard"), size_guidance={"scalars": 0})
    events.Reload()
    return {event.step: event.value for event in events.Scalars("train/loss")}


def _segment(config: TrainConfig, caplog: pytest.LogCaptureFixture) -> None:
    if config.launch.nproc_per_node == 1:
        assert train(config).status == "completed"
        return
    with caplog.at_level(logging.INFO, logger="pretrain_core.train.launch.torchrun"):
        assert run_torchrun(torchrun_command(config, write_config(config)), env=ENV, timeout_s=300) == 0, caplog.text


LAYOUTS: dict[str, list[dict[str, Any]]] = {
    "2 -> 4 -> 1 ranks (FSDP)": [
        {"nproc_per_node": 2, "strategy": "fsdp", "micro_batch_size": 2},
        {"nproc_per_node": 4, "strategy": "fsdp", "micro_batch_size": 1},
        {"nproc_per_node": 1, "strategy": "ddp", "micro_batch_size": 4},
    ],
    "FSDP -> TP -> FSDP": [
        {"nproc_per_node": 2, "strategy": "fsdp", "micro_batch_size": 2},
        {"nproc_per_node": 2, "strategy": "ddp", "tensor_parallel": 2, "micro_batch_size": 4},
        {"nproc_per_node": 2, "strategy": "fsdp", "micro_batch_size": 2},
    ],
}


@pytest.mark.parametrize("layouts", list(LAYOUTS), ids=list(LAYOUTS))
def test_a_run_moved_between_world_sizes_and_layouts_matches_one_that_never_moved(
    layouts: str, tiny_config: Callable[..., TrainConfig], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # a constant schedule after warmup: each segment's max_steps then leaves the lr of every step as the reference's
    base = {"lr_schedule": "constant", "backend": "gloo", "checkpoint_every": 100, "eval_every": 2}
    reference = train(tiny_config(max_steps=6, output_url=str(tmp_path / "reference"), **base))
    moved = str(tmp_path / "moved")
    for segment, layout in enumerate(LAYOUTS[layouts], start=1):
        config = tiny_config(max_steps=2 * segment, output_url=moved, **base, **layout)
        assert config.tokens_per_step == reference.summary["tokens_seen"] // 6
        _segment(config, caplog)
        meta = read_meta(storage.join(moved, "checkpoints", f"step-{2 * segment:08d}"))
        assert meta["world_size"] == layout["nproc_per_node"]
    losses = _losses(moved)
    assert sorted(losses) == [1, 2, 3, 4, 5, 6]
    for step, loss in reference.losses.items():
        assert losses[step] == pytest.approx(loss, rel=2e-4), step
    summary = storage.read_json(storage.join(moved, "train_summary.json"))
    assert summary["final_validation_loss"] == pytest.approx(reference.summary["final_validation_loss"], rel=2e-4)


def test_train_time_mixing_resumes_across_world_sizes_and_bills_what_it_fed(
    tiny_config: Callable[..., TrainConfig], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Weights far from the build's mix, a run moved 2 -> 4 -> 1 ranks: the same losses as one that never moved,
    and every checkpoint's bill of materials is the tokens it was fed, the same as the unmoved run's."""
    mixing = {"points": [{"at": 0, "weights": {"general": 0.2, "specialist": 0.3, "code": 0.5}}]}
    base = {"lr_schedule": "constant", "backend": "gloo", "checkpoint_every": 2, "eval_every": 2, "mixing": mixing}
    reference = train(tiny_config(max_steps=6, output_url=str(tmp_path / "reference"), **base))
    moved = str(tmp_path / "moved")
    for segment, layout in enumerate(LAYOUTS["2 -> 4 -> 1 ranks (FSDP)"], start=1):
        _segment(tiny_config(max_steps=2 * segment, output_url=moved, **base, **layout), caplog)
    losses = _losses(moved)
    for step, loss in reference.losses.items():
        assert losses[step] == pytest.approx(loss, rel=2e-4), step
    for step in (2, 4, 6):
        meta = read_meta(storage.join(moved, "checkpoints", f"step-{step:08d}"))
        unmoved = read_meta(storage.join(str(tmp_path / "reference"), "checkpoints", f"step-{step:08d}"))
        bill = meta["data"]["bill"]
        assert bill == unmoved["data"]["bill"] and bill["tokens"] == meta["tokens_seen"]
        assert sum(bill["by"]["domain"].values()) == bill["tokens"]
    shares = {domain: tokens / bill["tokens"] for domain, tokens in bill["by"]["domain"].items()}
    assert shares == pytest.approx(mixing["points"][0]["weights"], abs=1 / bill["sequences"])
