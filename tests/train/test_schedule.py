from __future__ import annotations

import itertools

import pytest
import torch

from pretrain_core.train.config import TrainConfig
from pretrain_core.train.optim import build_optimizer
from pretrain_core.train.schedule import build_scheduler, lr_multiplier


def test_warmup_is_linear_then_cosine_reaches_the_floor() -> None:
    values = [lr_multiplier(s, warmup_steps=4, max_steps=14, min_lr_ratio=0.1) for s in range(16)]
    assert values[:4] == pytest.approx([0.2, 0.4, 0.6, 0.8])
    assert values[4] == pytest.approx(1.0)
    assert values[9] == pytest.approx(0.1 + 0.9 * 0.5)  # half way through the decay
    assert values[14] == pytest.approx(0.1) and values[15] == pytest.approx(0.1)  # floor after max_steps
    decay = values[4:15]
    assert all(a > b for a, b in itertools.pairwise(decay))


def test_no_warmup_starts_at_peak() -> None:
    assert lr_multiplier(0, warmup_steps=0, max_steps=10, min_lr_ratio=0.0) == pytest.approx(1.0)
    assert lr_multiplier(10, warmup_steps=0, max_steps=10, min_lr_ratio=0.0) == pytest.approx(0.0)


def test_scheduler_drives_the_optimizer_lr_and_survives_a_state_dict_round_trip() -> None:
    param = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.AdamW([param], lr=1e-3)
    scheduler = build_scheduler(optimizer, warmup_steps=2, max_steps=10, min_lr_ratio=0.1)
    seen = []
    for _ in range(5):
        seen.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    assert seen == pytest.approx([1e-3 * lr_multiplier(s, 2, 10, 0.1) for s in range(5)])
    fresh_optimizer = torch.optim.AdamW([param], lr=1e-3)
    fresh = build_scheduler(fresh_optimizer, warmup_steps=2, max_steps=10, min_lr_ratio=0.1)
    fresh.load_state_dict(scheduler.state_dict())
    assert fresh.get_last_lr() == pytest.approx(scheduler.get_last_lr())
    fresh_optimizer.step()
    fresh.step()
    scheduler.step()
    assert fresh_optimizer.param_groups[0]["lr"] == pytest.approx(optimizer.param_groups[0]["lr"])


def test_linear_decay_falls_by_equal_steps_and_constant_stays_at_the_peak() -> None:
    linear = [lr_multiplier(s, warmup_steps=2, max_steps=12, min_lr_ratio=0.0, shape="linear") for s in range(13)]
    assert linear[:2] == pytest.approx([1 / 3, 2 / 3]) and linear[2] == pytest.approx(1.0)
    assert [a - b for a, b in itertools.pairwise(linear[2:])] == pytest.approx([0.1] * 10)
    constant = [lr_multiplier(s, warmup_steps=2, max_steps=12, min_lr_ratio=0.1, shape="constant") for s in range(20)]
    assert constant[2:] == pytest.approx([1.0] * 18)


def test_the_linear_scaling_rule_moves_the_peak_with_the_global_batch() -> None:
    tuned = TrainConfig(lr=1e-3, seq_len=128, micro_batch_size=8, lr_reference_batch_tokens=128 * 8)
    assert tuned.peak_lr() == pytest.approx(1e-3)
    four_gpus = tuned.updated(**{"nproc_per_node": 4, "grad_accum_steps": 2})
    assert four_gpus.peak_lr() == pytest.approx(8e-3)  # 8x the tokens per step, 8x the peak
    assert TrainConfig(lr=1e-3, nproc_per_node=4).peak_lr() == pytest.approx(1e-3)  # no reference: lr as given
    model = torch.nn.Linear(4, 4)
    assert build_optimizer(model, four_gpus).param_groups[0]["lr"] == pytest.approx(8e-3)
