"""How many workers each kind of runner gives, which sizes the groups of jobs a task runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from distributed import LocalCluster

from pretrain_core.config import ExecutionConfig
from tasks.runners import worker_count

REPO = Path(__file__).resolve().parents[2]


def test_a_running_cluster_is_asked_for_its_worker_threads() -> None:
    with LocalCluster(n_workers=3, threads_per_worker=2, processes=False, dashboard_address=None) as cluster:
        assert worker_count(ExecutionConfig(dask_address=cluster.scheduler_address)) == 6


def test_local_runners_count_what_the_config_starts() -> None:
    assert worker_count(ExecutionConfig(processes=3)) == 3
    assert worker_count(ExecutionConfig(dask_local_workers=5)) == 5
    assert worker_count(ExecutionConfig(processes=0, max_threads=7)) == 7


def test_an_unresolved_auto_is_refused_by_name() -> None:
    """Flows resolve `processes: auto` against the sources first; a runner asked before that says so."""
    with pytest.raises(ValueError, match="resolve_processes"):
        worker_count(ExecutionConfig())


_SHARED_API_FLOW = """
import os
from prefect import flow, task
from prefect.task_runners import ProcessPoolTaskRunner
from tasks.runners import api_shared_with_workers

@task
def api_url_seen(_: int) -> str:
    return os.environ.get("PREFECT_API_URL", "")

@flow(task_runner=ProcessPoolTaskRunner(max_workers=2))
def on_workers() -> list[str]:
    return [future.result() for future in api_url_seen.map(range(4))]

@flow
def run() -> None:
    with api_shared_with_workers():
        print("workers saw", sorted(set(on_workers())))

if __name__ == "__main__":
    run()
"""


def test_worker_processes_report_to_the_runs_temporary_server(tmp_path: Path) -> None:
    """Without PREFECT_API_URL a run starts a temporary server; its worker processes use it instead of each
    starting one of their own."""
    script = tmp_path / "shared_api.py"
    script.write_text(_SHARED_API_FLOW)
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env.update(PREFECT_HOME=str(tmp_path / "prefect"), PREFECT_LOGGING_LEVEL="INFO", PYTHONPATH=str(REPO))
    done = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=240, check=True
    )
    output = done.stdout + done.stderr
    started = re.findall(r"Starting temporary server on (http://\S+)", output)
    assert len(started) == 1, output
    assert f"workers saw ['{started[0]}/api/']" in output, output
