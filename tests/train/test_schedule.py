from __future__ import annotations

import itertools

import pytest
import torch

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
