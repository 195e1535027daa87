"""Health of a running training job, checked every step: loss spikes, straggling ranks.

A finding is logged by rank 0 as one line (`HealthEvent.line`), which the supervisor (the Prefect task) reads back
with `parse_health_event` and turns into a Prefect event, so an automation or a person can act on it: the format
lives here, in one place.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import deque
from dataclasses import dataclass, field
from typing import Literal

import torch
import torch.distributed as dist

from pretrain_core.train.parallel.distributed import DistEnv

HealthKind = Literal["loss-spike", "straggler"]
_EVENT = re.compile(r"\bhealth (loss-spike|straggler) at step (\d+):((?: \w+=[-+.\w]+)+)")


@dataclass(frozen=True)
class HealthEvent:
    kind: HealthKind
    step: int
    values: dict[str, float] = field(default_factory=dict)

    def line(self) -> str:
        """What rank 0 logs: `health straggler at step 40: rank=3 seconds=1.9 median=0.41 ratio=4.6`."""
        return f"health {self.kind} at step {self.step}: " + " ".join(f"{k}={v:.4g}" for k, v in self.values.items())


def parse_health_event(line: str) -> HealthEvent | None:
    """The event a log line reports (whatever prefix the logger put before it), or None."""
    match = _EVENT.search(line)
    if match is None:
        return None
    values = {name: float(text) for name, _, text in (pair.partition("=") for pair in match.group(3).split())}
    return HealthEvent(match.group(1), int(match.group(2)), values)  # type: ignore[arg-type]


class LossSpikeDetector:
    """A loss more than ``sigma`` standard deviations above the mean of the last ``window`` steps (OLMo-core's
    check: 6 sigma over 128 steps). Spikes stay out of the window, so one does not hide the next; nothing is
    judged before ``min_history`` steps, while the loss still falls fast."""

    def __init__(self, window: int = 128, sigma: float = 6.0, min_history: int = 16) -> None:
        self.sigma, self.min_history = sigma, min_history
        self.history: deque[float] = deque(maxlen=window)

    def observe(self, step: int, loss: float) -> HealthEvent | None:
        if not math.isfinite(loss):
            return None  # non-finite steps are counted and rolled back by the trainer
        if len(self.history) >= self.min_history:
            mean = statistics.fmean(self.history)
            spread = max(statistics.pstdev(self.history, mean), 1e-6 * max(abs(mean), 1.0))
            score = (loss - mean) / spread
            if score > self.sigma:
                return HealthEvent("loss-spike", step, {"loss": loss, "sigma": score, "mean": mean})
        self.history.append(loss)
        return None


@dataclass
class StragglerReport:
    """Step time per rank over the last interval: what TensorBoard plots, and the event when one rank lags."""

    seconds: list[float]
    event: HealthEvent | None

    def metrics(self) -> dict[str, float]:
        slowest = max(range(len(self.seconds)), key=self.seconds.__getitem__)
        return {
            "health/step_seconds_min": min(self.seconds),
            "health/step_seconds_max": max(self.seconds),
            "health/step_seconds_median": statistics.median(self.seconds),
            "health/slowest_rank": float(slowest),
        }


class StragglerCheck:
    """Every ``every`` steps all ranks share their mean compute time per step (an all-gather of one number each,
    a tensor: nothing pickled); a rank slower than ``factor`` x the median of the others is named (Megatron's
    straggler detector, by time). What each rank reports is its own work before it can wait for another: fetching
    the batch and the forward pass (under DDP these hold no collective; the backward's gradient all-reduce would
    make every rank as slow as the slowest)."""

    def __init__(self, env: DistEnv, every: int, factor: float) -> None:
        self.env, self.every, self.factor = env, every, factor
        self.total, self.count = 0.0, 0

    def observe(self, seconds: float) -> None:
        self.total += seconds
        self.count += 1

    def due(self, step: int) -> bool:
        return self.every > 0 and step % self.every == 0 and self.count > 0

    def check(self, step: int) -> StragglerReport:
        """Collective: every rank calls it at the same step (`due`)."""
        mine = torch.tensor([self.total / self.count], dtype=torch.float64, device=self.env.device)
        self.total, self.count = 0.0, 0
        if self.env.world_size > 1:
            gathered = [torch.zeros_like(mine) for _ in range(self.env.world_size)]
            dist.all_gather(gathered, mine)
            seconds = [float(t) for t in gathered]
        else:
            seconds = [float(mine)]
        slowest = max(range(len(seconds)), key=seconds.__getitem__)
        others = seconds[:slowest] + seconds[slowest + 1 :]
        median = statistics.median(others) if others else seconds[slowest]
        event = None
        if others and median > 0 and seconds[slowest] > self.factor * median:
            values = {"rank": float(slowest), "seconds": seconds[slowest], "median": median}
            event = HealthEvent("straggler", step, {**values, "ratio": seconds[slowest] / median})
        return StragglerReport(seconds, event)
