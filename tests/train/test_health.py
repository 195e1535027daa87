"""Loss spikes and straggling ranks: a planted spike is found and nothing else, a rank made slow is named over a real
gloo process group, and what rank 0 logs reads back as the event the Prefect task emits."""

from __future__ import annotations

import math
import os
import random
import time
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from pretrain_core.train.observe.health import HealthEvent, LossSpikeDetector, StragglerCheck, parse_health_event
from pretrain_core.train.parallel.distributed import DistEnv


def _training_like_losses(steps: int, seed: int = 0) -> list[float]:
    """A loss curve as training draws it: a fast fall, then a slow one, with step-to-step noise."""
    rng = random.Random(seed)
    return [2.0 + 8.0 * math.exp(-step / 40) + rng.gauss(0, 0.05) for step in range(1, steps + 1)]


def test_a_planted_spike_is_found_and_nothing_else() -> None:
    losses = _training_like_losses(400)
    losses[299] += 1.5  # step 300: far above the window's mean and spread
    detector = LossSpikeDetector(window=128, sigma=6.0)
    events = [e for step, loss in enumerate(losses, start=1) if (e := detector.observe(step, loss))]
    assert [e.step for e in events] == [300]
    assert events[0].values["sigma"] > 6 and events[0].values["loss"] == pytest.approx(losses[299])
    assert detector.observe(401, float("nan")) is None  # non-finite steps are the trainer's to count and roll back


def test_a_second_spike_right_after_the_first_is_found_too() -> None:
    losses = _training_like_losses(300, seed=1)
    losses[249] += 2.0
    losses[250] += 2.0  # the first stays out of the window, so it does not widen it for the second
    detector = LossSpikeDetector(window=64, sigma=6.0)
    assert [step for step, loss in enumerate(losses, 1) if detector.observe(step, loss)] == [250, 251]


def test_an_event_line_reads_back_as_the_event() -> None:
    event = HealthEvent("straggler", 40, {"rank": 3.0, "seconds": 1.9, "median": 0.41, "ratio": 4.634})
    logged = "2026-12-06 10:00:00,000 rank0 WARNING pretrain_core.train.trainer: " + event.line()
    assert parse_health_event(logged) == HealthEvent("straggler", 40, {**event.values, "ratio": 4.634})
    assert parse_health_event("step 40/100 loss=3.2") is None


def _rank(rank: int, world: int, store: str, slow_rank: int, results: str) -> None:
    """One rank: 12 'steps' of real sleeping work, the slow rank's three times as long; every 4 steps the check."""
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=world)
    env = DistEnv(rank=rank, local_rank=rank, world_size=world, device=torch.device("cpu"))
    check = StragglerCheck(env, every=4, factor=1.5)
    found = []
    for step in range(1, 13):
        began = time.perf_counter()
        time.sleep(0.03 if rank == slow_rank else 0.01)
        check.observe(time.perf_counter() - began)
        if check.due(step):
            report = check.check(step)
            found.append(report.event.line() if report.event else f"none at {step}")
            assert report.metrics()["health/slowest_rank"] == slow_rank
    dist.destroy_process_group()
    Path(results, f"rank-{rank}").write_text("\n".join(found))


@pytest.mark.parametrize("world", [2, 3])
def test_the_straggler_check_names_the_rank_made_slow(world: int, tmp_path: Path) -> None:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    slow = world - 1
    mp.spawn(_rank, args=(world, str(tmp_path / "store"), slow, str(tmp_path)), nprocs=world, join=True)
    for rank in range(world):
        lines = (tmp_path / f"rank-{rank}").read_text().splitlines()
        events = [parse_health_event(line) for line in lines]
        assert [e.step for e in events if e] == [4, 8, 12], lines  # every rank agrees: the check is collective
        assert all(e is not None and e.values["rank"] == slow and e.values["ratio"] > 1.5 for e in events)
