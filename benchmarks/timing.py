"""CPU-time measurement and the result table every stage benchmark prints, so that figures compare across stages.

Times are CPU seconds of the benchmark process (``time.process_time``): with one thread that is the cost on one
core, and it stays put when other work shares the machine, which wall time does not.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


def cpu_time(run: Callable[[], T], repeat: int = 1) -> tuple[float, T]:
    """Best CPU seconds of this process over ``repeat`` runs, and the last run's result."""
    best = float("inf")
    for _ in range(max(1, repeat)):
        started = time.process_time()
        result = run()
        best = min(best, time.process_time() - started)
    return best, result


@dataclass(frozen=True)
class Rate:
    """One timed implementation: what it processed and the CPU seconds it took."""

    name: str
    seconds: float
    docs: float
    megabytes: float

    @property
    def docs_per_s(self) -> float:
        return self.docs / self.seconds

    @property
    def mb_per_s(self) -> float:
        return self.megabytes / self.seconds


def print_rates(title: str, rates: Sequence[Rate], baseline: Rate | None) -> None:
    """A table of per-core rates; each row's MB/s is also given as a ratio to the baseline's (above 1: faster)."""
    print(f"\n{title}")
    print(f"  {'implementation':<46} {'docs':>8} {'MB':>7} {'CPU s':>8} {'docs/s':>10} {'MB/s':>8} {'vs base':>8}")
    for rate in rates:
        ratio = f"{rate.mb_per_s / baseline.mb_per_s:7.2f}x" if baseline else ""
        print(
            f"  {rate.name:<46} {rate.docs:>8.0f} {rate.megabytes:>7.2f} {rate.seconds:>8.3f}"
            f" {rate.docs_per_s:>10.1f} {rate.mb_per_s:>8.3f} {ratio:>8}"
        )
