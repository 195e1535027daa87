"""How many workers each kind of runner gives, which sizes the groups of jobs a task runs."""

from __future__ import annotations

from distributed import LocalCluster

from pretrain_core.config import ExecutionConfig
from tasks.runners import worker_count


def test_a_running_cluster_is_asked_for_its_worker_threads() -> None:
    with LocalCluster(n_workers=3, threads_per_worker=2, processes=False, dashboard_address=None) as cluster:
        assert worker_count(ExecutionConfig(dask_address=cluster.scheduler_address)) == 6


def test_local_runners_count_what_the_config_starts() -> None:
    assert worker_count(ExecutionConfig(processes=3)) == 3
    assert worker_count(ExecutionConfig(dask_local_workers=5)) == 5
    assert worker_count(ExecutionConfig(max_threads=7)) == 7
