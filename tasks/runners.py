"""Choose where shard tasks run: threads or processes here, a throwaway Dask LocalCluster, or a running Dask
cluster."""

from __future__ import annotations

from typing import Any

from prefect.task_runners import ProcessPoolTaskRunner, TaskRunner, ThreadPoolTaskRunner
from prefect_dask import DaskTaskRunner

from pretrain_core.config import ExecutionConfig


def task_runner_for(execution: ExecutionConfig) -> TaskRunner[Any]:
    """A Dask runner when a cluster address (or local workers) is configured, a process pool when processes are,
    else a thread pool."""
    if execution.dask_address:
        return DaskTaskRunner(address=execution.dask_address)
    if execution.dask_local_workers:
        return DaskTaskRunner(
            cluster_kwargs={"n_workers": execution.dask_local_workers, "threads_per_worker": 1, "processes": True}
        )
    if execution.processes:
        return ProcessPoolTaskRunner(max_workers=execution.processes)
    return ThreadPoolTaskRunner(max_workers=execution.max_threads)
