from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
import torch

from pretrain_core import storage
from pretrain_core.train.checkpoint import (
    checkpoint_url,
    completed_checkpoints,
    latest_checkpoint,
    load_checkpoint,
    load_model,
    save_checkpoint,
)
from pretrain_core.train.config import TrainConfig
from pretrain_core.train.model import GPT, ModelArgs, cross_entropy
from pretrain_core.train.optim import build_optimizer
from pretrain_core.train.schedule import build_scheduler

ARGS = ModelArgs(vocab_size=40, n_layer=1, n_head=2, d_model=16, max_seq_len=8)


def _trained(seed: int) -> tuple[GPT, torch.optim.Optimizer, torch.optim.lr_scheduler.LambdaLR]:
    torch.manual_seed(seed)
    model = GPT(ARGS)
    optimizer = build_optimizer(model, TrainConfig(lr=1e-2))
    scheduler = build_scheduler(optimizer, 1, 10, 0.1)
    for _ in range(3):
        batch = torch.randint(0, 40, (2, 9))
        cross_entropy(model(batch[:, :-1]), batch[:, 1:]).backward()
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
    return model, optimizer, scheduler


@pytest.mark.parametrize("where", ["local", "memory"])
def test_round_trip_restores_model_optimizer_scheduler_and_rng(where: str, tmp_path: Path, memory_url: str) -> None:
    output = str(tmp_path / "out") if where == "local" else memory_url
    model, optimizer, scheduler = _trained(0)
    random.seed(5)
    np.random.seed(5)
    torch.manual_seed(5)
    meta = {"model_args": ARGS.to_dict(), "data": {"epoch": 1, "position": 8}}
    url = save_checkpoint(output, 3, model, optimizer, scheduler, meta, keep_last=2)
    assert url == checkpoint_url(output, 3) and latest_checkpoint(output) == url
    expected_draws = (random.random(), float(np.random.rand()), torch.rand(1).item())

    other, other_optimizer, other_scheduler = _trained(1)
    restored_meta = load_checkpoint(url, other, other_optimizer, other_scheduler)
    assert restored_meta["step"] == 3 and restored_meta["data"] == {"epoch": 1, "position": 8}
    assert (random.random(), float(np.random.rand()), torch.rand(1).item()) == expected_draws
    for (name, a), b in zip(model.state_dict().items(), other.state_dict().values(), strict=True):
        assert torch.equal(a, b), name
    assert other_scheduler.get_last_lr() == scheduler.get_last_lr()
    # identical next update: the Adam moments came back too
    batch = torch.randint(0, 40, (2, 9))
    for m, opt in ((model, optimizer), (other, other_optimizer)):
        cross_entropy(m(batch[:, :-1]), batch[:, 1:]).backward()
        opt.step()
    assert torch.equal(model.embed.weight, other.embed.weight)

    evaluated, evaluated_meta = load_model(url)
    assert evaluated_meta["step"] == 3 and not evaluated.training
    assert torch.equal(evaluated.lm_head.weight, evaluated.embed.weight)


def test_incomplete_checkpoints_are_ignored_and_old_ones_pruned(tmp_path: Path) -> None:
    output = str(tmp_path)
    model, optimizer, scheduler = _trained(0)
    meta = {"model_args": ARGS.to_dict()}
    for step in (1, 2, 3):
        save_checkpoint(output, step, model, optimizer, scheduler, meta, keep_last=2)
    assert [s for s, _ in completed_checkpoints(output)] == [2, 3]
    # a save that died before its manifest: model written, nothing else
    storage.write_bytes(storage.join(checkpoint_url(output, 4), "model.pt"), b"partial")
    assert latest_checkpoint(output) == checkpoint_url(output, 3)
    save_checkpoint(output, 5, model, optimizer, scheduler, meta, keep_last=2)
    assert [s for s, _ in completed_checkpoints(output)] == [3, 5]
    assert not storage.exists(checkpoint_url(output, 4))  # leftover of the interrupted save removed


def test_no_checkpoint_means_fresh_start(tmp_path: Path) -> None:
    assert latest_checkpoint(str(tmp_path / "nothing-here")) is None
