from __future__ import annotations

import io
import json
import random
from pathlib import Path

import numpy as np
import pytest
import torch
from torch.distributed.checkpoint.state_dict import get_optimizer_state_dict

from pretrain_core import storage
from pretrain_core.train.checkpoint.catalog import checkpoint_url, completed_checkpoints, latest_checkpoint
from pretrain_core.train.checkpoint.records import evaluation_url, is_evaluated, prune_checkpoints
from pretrain_core.train.checkpoint.store import (
    finish_save,
    load_checkpoint,
    load_model,
    rng_state,
    save_checkpoint,
    start_save,
)
from pretrain_core.train.config import TrainConfig
from pretrain_core.train.model.gpt import GPT, ModelArgs, cross_entropy
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
    meta = {"model_args": ARGS.to_dict(), "data": {"epoch": 1, "position": 8}, "config": {}}
    url = save_checkpoint(output, 3, model, optimizer, scheduler, meta)
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


def _meta(validation_loss: float | None = None, **config: object) -> dict[str, object]:
    return {
        "model_args": ARGS.to_dict(),
        "config": {"keep_last_checkpoints": 2, **config},
        "validation_loss": validation_loss,
    }


def test_incomplete_checkpoints_are_ignored_and_old_ones_pruned(tmp_path: Path) -> None:
    output = str(tmp_path)
    model, optimizer, scheduler = _trained(0)
    for step in (1, 2, 3):
        save_checkpoint(output, step, model, optimizer, scheduler, _meta())
    assert [s for s, _ in completed_checkpoints(output)] == [2, 3]
    # a save that died before its manifest: model written, nothing else
    storage.write_bytes(storage.join(checkpoint_url(output, 4), "model.pt"), b"partial")
    assert latest_checkpoint(output) == checkpoint_url(output, 3)
    save_checkpoint(output, 5, model, optimizer, scheduler, _meta())
    assert [s for s, _ in completed_checkpoints(output)] == [3, 5]
    assert not storage.exists(checkpoint_url(output, 4))  # leftover of the interrupted save removed


def test_a_checkpoint_is_pruned_only_once_its_evaluation_is_recorded(tmp_path: Path) -> None:
    output = str(tmp_path)
    model, optimizer, scheduler = _trained(0)
    waiting = _meta(prune_waits_for_evaluation=True)
    for step in (1, 2, 3, 4):
        save_checkpoint(output, step, model, optimizer, scheduler, waiting)
    assert [s for s, _ in completed_checkpoints(output)] == [1, 2, 3, 4]  # none evaluated yet: all kept
    storage.write_json(evaluation_url(output, 1), {"step": 1})
    storage.write_json(evaluation_url(output, 2, failed=True), {"step": 2, "error": "OOM"})
    assert is_evaluated(output, 1) and is_evaluated(output, 2) and not is_evaluated(output, 3)
    assert prune_checkpoints(output, 2, wait_for_evaluation=True) == [1, 2]
    assert [s for s, _ in completed_checkpoints(output)] == [3, 4]
    assert storage.exists(evaluation_url(output, 1))  # the record outlives its checkpoint


def test_the_best_checkpoint_by_validation_loss_is_kept_however_old(tmp_path: Path) -> None:
    output = str(tmp_path)
    model, optimizer, scheduler = _trained(0)
    for step, loss in ((1, 4.0), (2, 3.0), (3, 3.5), (4, 3.6), (5, None)):
        save_checkpoint(output, step, model, optimizer, scheduler, _meta(loss, keep_best_checkpoint=True))
    assert [s for s, _ in completed_checkpoints(output)] == [2, 4, 5]


def test_no_checkpoint_means_fresh_start(tmp_path: Path) -> None:
    assert latest_checkpoint(str(tmp_path / "nothing-here")) is None


def test_a_background_save_keeps_the_state_of_its_step_while_training_changes_it(tmp_path: Path) -> None:
    """The shards are copied to memory when the save starts: later updates do not leak into it, and the
    checkpoint is complete (listed, loadable) only once `finish_save` wrote its manifest."""
    output = str(tmp_path)
    model, optimizer, scheduler = _trained(0)
    at_save = {name: tensor.clone() for name, tensor in model.state_dict().items()}
    saving = start_save(output, 3, model, optimizer, scheduler, _meta(), background=True)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(1.0)  # training goes on while the shards are written
    assert completed_checkpoints(output) == []
    assert finish_save(saving) == checkpoint_url(output, 3) and latest_checkpoint(output) == saving.url
    restored, _ = load_model(saving.url)
    for name, tensor in restored.state_dict().items():
        assert torch.equal(tensor, at_save[name]), name


def test_nothing_in_a_checkpoint_needs_unpickling(tmp_path: Path) -> None:
    """Every file is JSON, the tokenizer, or a DCP shard file whose tensors torch's weights-only loader reads; the
    index that DCP itself would pickle is JSON."""
    model, optimizer, scheduler = _trained(0)
    url = save_checkpoint(str(tmp_path), 3, model, optimizer, scheduler, _meta())
    files = sorted(p.relative_to(url).as_posix() for p in Path(url).rglob("*") if p.is_file())
    assert files == [
        "manifest.json", "meta.json", "rng-rank-00000.json", "state/__0_0.distcp", "state/index.json",
        "train_state.json",
    ]  # fmt: skip
    for name in files:
        if name.endswith(".json"):
            json.loads((Path(url) / name).read_text())


def test_a_checkpoint_of_the_consolidated_format_still_loads(tmp_path: Path) -> None:
    """Written as releases before the sharded format did: `model.pt`, `optimizer.pt`, `rng-rank-*.pt` (torch.save)."""
    model, optimizer, scheduler = _trained(0)
    url = checkpoint_url(str(tmp_path), 3)
    for name, obj in {
        "model.pt": model.state_dict(),
        "optimizer.pt": {"optimizer": get_optimizer_state_dict(model, optimizer), "scheduler": scheduler.state_dict()},
        "rng-rank-00000.pt": {**rng_state(), "torch": torch.get_rng_state(), "cuda": []},
    }.items():
        buffer = io.BytesIO()
        torch.save(obj, buffer)
        storage.write_bytes(storage.join(url, name), buffer.getvalue())
    storage.write_json(storage.join(url, "meta.json"), {**_meta(), "step": 3, "world_size": 1})
    storage.write_json(storage.join(url, "manifest.json"), {"step": 3, "files": ["model.pt"]})
    other, other_optimizer, other_scheduler = _trained(1)
    assert load_checkpoint(url, other, other_optimizer, other_scheduler)["step"] == 3
    assert torch.equal(other.embed.weight, model.embed.weight)
    assert other_scheduler.get_last_lr() == scheduler.get_last_lr()
    evaluated, _ = load_model(url)
    assert torch.equal(evaluated.embed.weight, model.embed.weight)
