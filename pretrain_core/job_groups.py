"""A round of jobs (a stage's shards, its fit's per-shard maps, a reduce round's jobs) grouped into fewer
orchestrator tasks.

An orchestrator pays for every task it tracks: with worker processes Prefect spends about 0.2 CPU s on each task
run (its context rebuilt in the worker, its states and logs through the API server; docs/benchmarks.md), which for
a fast stage's small shards is more than the shard's own work. So each task runs a group of jobs, about
`TASKS_PER_WORKER` tasks per worker and round: enough tasks to keep every worker busy to the end of the round, few
enough that tracking them costs little. Jobs are dealt round-robin, so a run of neighbouring slow jobs (one
source's large files) is spread over the groups; results come back in job order (`in_job_order`). Each job still
keeps its own completion marker, so a rerun after a failure redoes only the jobs of the group that did not finish.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

TASKS_PER_WORKER = 4


class Keyed(Protocol):
    @property
    def key(self) -> str: ...


J = TypeVar("J", bound=Keyed)
R = TypeVar("R")


@dataclass(frozen=True)
class JobGroup(Generic[J]):
    """The jobs one task runs and their places in the round."""

    positions: tuple[int, ...]
    jobs: tuple[J, ...]

    @property
    def label(self) -> str:
        """The first job's key and how many more the group holds, for task names ("bible-00003+4")."""
        more = len(self.jobs) - 1
        return f"{self.jobs[0].key}+{more}" if more else self.jobs[0].key


def jobs_per_task(jobs: int, workers: int, setting: int = 0) -> int:
    """How many jobs each task of a round of `jobs` runs: `setting` when given (> 0), else enough that the round
    is about `TASKS_PER_WORKER` tasks per worker."""
    if setting > 0:
        return setting
    return max(1, math.ceil(jobs / (max(workers, 1) * TASKS_PER_WORKER)))


def group_jobs(jobs: Sequence[J], per_task: int) -> list[JobGroup[J]]:
    """The round's jobs dealt round-robin into ceil(len / per_task) groups of at most `per_task` jobs."""
    if per_task < 1:
        raise ValueError(f"jobs per task must be at least 1, not {per_task}")
    count = math.ceil(len(jobs) / per_task)
    return [JobGroup(tuple(range(first, len(jobs), count)), tuple(jobs[first::count])) for first in range(count)]


def in_job_order(groups: Sequence[JobGroup[J]], results: Sequence[Sequence[R]]) -> list[R]:
    """Each group's results (one per job, in the group's order) put back in the order of the round's jobs."""
    ordered: dict[int, R] = {}
    for group, group_results in zip(groups, results, strict=True):
        if len(group_results) != len(group.jobs):
            raise ValueError(f"group {group.label} returned {len(group_results)} results for {len(group.jobs)} jobs")
        ordered.update(zip(group.positions, group_results, strict=True))
    return [ordered[position] for position in range(len(ordered))]
