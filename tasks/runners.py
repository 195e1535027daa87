"""Choose where shard tasks run: threads or processes here, a throwaway Dask LocalCluster, or a running Dask
cluster; and how many workers that gives (which sizes the groups of jobs each task runs)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from distributed import Client, Security
from prefect.client.orchestration import get_client
from prefect.settings import PREFECT_API_URL, temporary_settings
from prefect.task_runners import ProcessPoolTaskRunner, TaskRunner, ThreadPoolTaskRunner
from prefect_dask import DaskTaskRunner

from pretrain_core.config import ExecutionConfig


def task_runner_for(execution: ExecutionConfig) -> TaskRunner[Any]:
    """A Dask runner when a cluster address (or local workers) is configured, a process pool when processes are
    (resolved to a number), else a thread pool."""
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
    processes = _resolved(execution)
    if processes:
        return ProcessPoolTaskRunner(max_workers=processes)
    return ThreadPoolTaskRunner(max_workers=execution.max_threads)


@contextmanager
def api_shared_with_workers() -> Iterator[None]:
    """Inside it, worker processes report to this run's Prefect API. Prefect hands workers its settings, but
    not the address of a temporary server it started for want of PREFECT_API_URL: each worker would start a
    server of its own (a flow of four trivial tasks on two workers took 11.3 s with that, 3.6 s without), and
    its task runs would not show in the run's UI."""
    if PREFECT_API_URL.value():
        yield
        return
    with get_client(sync_client=True) as client:
        url = str(client.api_url)
    with temporary_settings(updates={PREFECT_API_URL: url}):
        yield


def worker_count(execution: ExecutionConfig) -> int:
    """How many tasks the runner of `execution` runs at once: a running cluster's worker threads (asked of its
    scheduler), else the configured workers, processes or threads."""
    if execution.dask_address:
        with Client(execution.dask_address, set_as_default=False, timeout="60s", **_client_kwargs(execution)) as client:
            return max(1, sum(client.nthreads().values()))
    return execution.dask_local_workers or _resolved(execution) or execution.max_threads


def _resolved(execution: ExecutionConfig) -> int:
    """`execution.processes` as a number: flows resolve auto against the sources before choosing a runner
    (`pretrain_core.pipeline.resolve_processes`)."""
    if execution.processes == "auto":
        raise ValueError("execution.processes is auto: resolve it with pretrain_core.pipeline.resolve_processes first")
    return execution.processes


def _client_kwargs(execution: ExecutionConfig) -> dict[str, Any]:
    """The client's certificate and the cluster's CA, when the scheduler speaks TLS."""
    tls = execution.dask_tls
    if tls is None:
        return {}
    security = Security(
        tls_ca_file=tls.ca_file, tls_client_cert=tls.cert_file, tls_client_key=tls.key_file, require_encryption=True
    )
    return {"security": security}
