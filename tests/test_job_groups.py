"""Grouping a round's jobs into tasks: sizes, round-robin dealing, results back in job order."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from pretrain_core.job_groups import TASKS_PER_WORKER, group_jobs, in_job_order, jobs_per_task


@dataclass(frozen=True)
class Job:
    key: str


def jobs(n: int) -> list[Job]:
    return [Job(f"shard-{i:05d}") for i in range(n)]


def test_a_round_is_about_four_tasks_per_worker_unless_a_size_is_set() -> None:
    assert TASKS_PER_WORKER == 4
    assert jobs_per_task(9, workers=2) == 2  # 8 slots for 9 jobs
    assert jobs_per_task(8, workers=2) == 1
    assert jobs_per_task(1_000, workers=2) == 125
    assert jobs_per_task(1_000, workers=64) == 4
    assert jobs_per_task(0, workers=2) == 1
    assert jobs_per_task(1_000, workers=2, setting=1) == 1  # a task per shard, as asked
    assert jobs_per_task(5, workers=0) == 2  # a runner that reports no worker still gets groups


def test_jobs_are_dealt_round_robin_and_come_back_in_order() -> None:
    round_jobs = jobs(10)
    groups = group_jobs(round_jobs, 3)
    assert [len(g.jobs) for g in groups] == [3, 3, 2, 2]
    assert [job.key for job in groups[0].jobs] == ["shard-00000", "shard-00004", "shard-00008"]
    assert groups[0].label == "shard-00000+2" and group_jobs(round_jobs[:1], 3)[0].label == "shard-00000"
    assert sorted(p for g in groups for p in g.positions) == list(range(10))
    results = [[job.key.upper() for job in g.jobs] for g in groups]
    assert in_job_order(groups, results) == [job.key.upper() for job in round_jobs]
    assert group_jobs([], 3) == []


def test_a_group_with_a_missing_result_is_an_error_not_a_shorter_list() -> None:
    groups = group_jobs(jobs(4), 2)
    with pytest.raises(ValueError, match="returned 1 results for 2 jobs"):
        in_job_order(groups, [["a", "b"], ["c"]])
    with pytest.raises(ValueError, match="at least 1"):
        group_jobs(jobs(4), 0)
