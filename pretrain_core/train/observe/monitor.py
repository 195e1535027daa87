"""What a supervisor learns from torchrun's output: rank 0's progress lines, the loss history, the last lines.

Rank 0 logs `step 12/100 loss=3.21 lr=0.0003 grad_norm=0.9 tokens_per_s=1640` (see `format_progress`); the
supervisor (the Prefect task, `pretrain train`) reads the same line back with `parse_progress` to move a progress
bar, estimate the time left and draw the loss curve, so the format lives in one place. The last lines are kept so
a failed run can end its log, and its error, with the worker's real exception instead of torchrun's exit code.
"""

from __future__ import annotations

import re
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

_PROGRESS = re.compile(r"\bstep (\d+)/(\d+)((?: \w+=[-+.\w]+)+)\s*$")
_EXCEPTION = re.compile(r"^(?:[\w.]+\.)?\w*(?:Error|Exception|Interrupt|Exit)\b(?::.*)?$")
_LAUNCHER_ERRORS = ("torch.distributed.elastic.",)
DATA_WAIT_SHOWN = 0.05  # a share of step time spent waiting for data worth an operator's eye


@dataclass(frozen=True)
class ProgressPoint:
    step: int
    max_steps: int
    values: dict[str, float]


def format_progress(step: int, max_steps: int, values: dict[str, float]) -> str:
    """The progress line rank 0 logs; `parse_progress` reads it back."""
    return f"step {step}/{max_steps} " + " ".join(f"{name}={value:.4g}" for name, value in values.items())


def parse_progress(line: str) -> ProgressPoint | None:
    """The progress a log line reports (whatever prefix the logger put before it), or None."""
    match = _PROGRESS.search(line)
    if match is None:
        return None
    values = {}
    for pair in match.group(3).split():
        name, _, text = pair.partition("=")
        try:
            values[name] = float(text)
        except ValueError:
            return None
    return ProgressPoint(int(match.group(1)), int(match.group(2)), values)


def _seconds(value: float) -> str:
    minutes, seconds = divmod(round(value), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{seconds:02d}s" if minutes else f"{seconds}s"


@dataclass
class TrainingMonitor:
    """Reads torchrun's output line by line (from one thread) and answers from any other."""

    max_steps: int
    tail_lines: int = 80
    clock: Callable[[], float] = time.monotonic
    train_losses: list[tuple[int, float]] = field(default_factory=list)
    validation_losses: list[tuple[int, float]] = field(default_factory=list)
    latest: dict[str, float] = field(default_factory=dict)
    step: int = 0
    _first: tuple[float, int] | None = None  # (time, step) of the first progress line: where the rate is taken from
    _last_time: float = 0.0
    _tail: deque[str] = field(default_factory=deque)

    def feed(self, line: str) -> ProgressPoint | None:
        """Take one output line; returns the progress it reports, if any."""
        self._tail.append(line)
        while len(self._tail) > self.tail_lines:
            self._tail.popleft()
        point = parse_progress(line)
        if point is None:
            return None
        now = self.clock()
        if self._first is None:
            self._first = (now, point.step)
        self.step, self._last_time = point.step, now
        self.latest.update(point.values)
        if "loss" in point.values:
            self.train_losses.append((point.step, point.values["loss"]))
        if "val_loss" in point.values:
            self.validation_losses.append((point.step, point.values["val_loss"]))
        return point

    def eta_s(self) -> float | None:
        """Seconds left at the step rate seen since the first progress line; None before two lines."""
        if self._first is None or self.step <= self._first[1]:
            return None
        rate = (self.step - self._first[1]) / max(self._last_time - self._first[0], 1e-9)
        return (self.max_steps - self.step) / rate

    def summary(self) -> str:
        """One line for a progress bar: `step 40/100 · loss 3.21 · 1,640 tokens/s · 812 MB · 2m10s left`."""
        parts = [f"step {self.step}/{self.max_steps}"]
        if "loss" in self.latest:
            parts.append(f"loss {self.latest['loss']:.4g}")
        if "val_loss" in self.latest:
            parts.append(f"val loss {self.latest['val_loss']:.4g}")
        if "tokens_per_s" in self.latest:
            parts.append(f"{self.latest['tokens_per_s']:,.0f} tokens/s")
        if "memory_mb" in self.latest:
            parts.append(f"{self.latest['memory_mb']:,.0f} MB")
        if "gpu_util" in self.latest:
            parts.append(f"GPU {self.latest['gpu_util']:.0f}%")
        if self.latest.get("data_share", 0) >= DATA_WAIT_SHOWN:
            parts.append(f"{self.latest['data_share']:.0%} waiting for data")
        if (eta := self.eta_s()) is not None:
            parts.append(f"{_seconds(eta)} left")
        return " · ".join(parts)

    def tail(self) -> list[str]:
        return list(self._tail)

    def failure(self) -> str:
        """The first exception a worker printed (the end of the first failing rank's traceback; torchrun's own
        `ChildFailedError` that follows says nothing more), else the last non-empty line."""
        lines = [line.strip() for line in self._tail if line.strip()]
        for line in lines:
            if _EXCEPTION.match(line) and not line.startswith(_LAUNCHER_ERRORS):
                return line
        return lines[-1] if lines else "no output"
