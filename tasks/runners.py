"""Choose where shard tasks run: threads or processes here, a throwaway Dask LocalCluster, or a running Dask
cluster; and how many workers that gives (which sizes the groups of jobs each task runs)."""

from __future__ import annotations

from typing import Any

from distributed import Client, Security
from prefect.task_runners import ProcessPoolTaskRunner, TaskRunner, ThreadPoolTaskRunner
from prefect_dask import DaskTaskRunner

from pretrain_core.config import ExecutionConfig


def task_runner_for(execution: ExecutionConfig) -> TaskRunner[Any]:
    """A Dask runner when a cluster address (or local workers) is configured, a process pool when processes are,
    else a thread pool."""
    if execution.dask_address:
        return DaskTaskRunner(address=execution.dask_address, client_kwargs=_client_kwargs(execution))
    if execution.dask_local_workers:
        # on loopback, dashboard included: a throwaway cluster serves this machine only
        return DaskTaskRunner(
            cluster_kwargs={
                "n_workers": execution.dask_local_workers, "threads_per_worker": 1, "processes": True,
                "host": "127.0.0.1", "dashboard_address": "127.0.0.1:0",
            }
        )  # fmt: skip
    if execution.processes:
        return ProcessPoolTaskRunner(max_workers=execution.processes)
    return ThreadPoolTaskRunner(max_workers=execution.max_threads)


def worker_count(execution: ExecutionConfig) -> int:
    """How many tasks the runner of `execution` runs at once: a running cluster's worker threads (asked of its
    scheduler), else the configured workers, processes or threads."""
    if execution.dask_address:
        with Client(execution.dask_address, set_as_default=False, timeout="60s", **_client_kwargs(execution)) as client:
            return max(1, sum(client.nthreads().values()))
    return execution.dask_local_workers or execution.processes or execution.max_threads


def _client_kwargs(execution: ExecutionConfig) -> dict[str, Any]:
    """The client's certificate and the cluster's CA, when the scheduler speaks TLS."""
    tls = execution.dask_tls
    if tls is None:
        return {}
    security = Security(
        tls_ca_file=tls.ca_file, tls_client_cert=tls.cert_file, tls_client_key=tls.key_file, require_encryption=True
    )
    return {"security": security}
