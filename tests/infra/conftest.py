"""A real Prefect server on loopback with infra/prefect.yaml deployed to it, and process workers on demand."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.actions import GlobalConcurrencyLimitCreate, WorkPoolCreate
from prefect.settings import PREFECT_API_URL, temporary_settings

from tests.infra.processes import PREFECT, free_port, run_stack_script, stop, wait_healthy

REPO_ROOT = Path(__file__).resolve().parents[2]
PREFECT_FILE = REPO_ROOT / "infra" / "prefect.yaml"
POOLS = {"pretrain-cpu": "process", "pretrain-gpu": "process"}


@pytest.fixture(scope="session")
def stack_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Environment of every process of the stack: its own Prefect home and API address, fast worker polling."""
    port = free_port()
    return {
        **os.environ,
        "PREFECT_HOME": str(tmp_path_factory.mktemp("prefect-home")),
        "PREFECT_API_URL": f"http://127.0.0.1:{port}/api",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_SERVER_UI_ENABLED": "true",  # tests/infra/test_ui.py drives it with a browser
        "PREFECT_UI_API_URL": f"http://127.0.0.1:{port}/api",
        "PREFECT_SERVER_CONCURRENCY_LEASE_STORAGE": "prefect.server.concurrency.lease_storage.filesystem",
        "PREFECT_FLOWS_HEARTBEAT_FREQUENCY": "30",
        "PREFECT_WORKER_QUERY_SECONDS": "1",
        "PREFECT_LOGGING_LEVEL": "INFO",
    }


@pytest.fixture(scope="session")
def deployed_api(stack_env: dict[str, str]) -> Iterator[str]:
    """The server with the two work pools, the `pretrain-gpu` limit (one slot), every deployment and the
    automations, as infra/stack/up.sh sets it up."""
    api_url = stack_env["PREFECT_API_URL"]
    port = api_url.split(":")[2].split("/")[0]
    server = subprocess.Popen(
        [*PREFECT, "server", "start", "--host", "127.0.0.1", "--port", port],
        env={k: v for k, v in stack_env.items() if k != "PREFECT_API_URL"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_healthy(api_url, server, timeout_s=60)
        with temporary_settings(updates={PREFECT_API_URL: api_url}), get_client(sync_client=True) as client:
            for name, pool_type in POOLS.items():
                client.create_work_pool(WorkPoolCreate(name=name, type=pool_type))
            client.create_global_concurrency_limit(GlobalConcurrencyLimitCreate(name="pretrain-gpu", limit=1))
        deploy = subprocess.run(
            [*PREFECT, "--no-prompt", "deploy", "--all", "--prefect-file", str(PREFECT_FILE)],
            cwd=REPO_ROOT,
            env=stack_env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert deploy.returncode == 0, deploy.stdout + deploy.stderr
        automations = subprocess.run(
            [sys.executable, str(REPO_ROOT / "infra" / "stack" / "automations.py"), "--within", "90"],
            cwd=REPO_ROOT, env=stack_env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert automations.returncode == 0, automations.stdout + automations.stderr
        with temporary_settings(updates={PREFECT_API_URL: api_url}):
            yield api_url
    finally:
        stop(server)


@pytest.fixture(scope="session")
def workers(deployed_api: str, stack_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One process worker per pool, as infra/stack/up.sh starts them; yields the directory of their logs."""
    logs = tmp_path_factory.mktemp("worker-logs")
    started = []
    for pool in POOLS:
        log = (logs / f"{pool}.log").open("wb")
        started.append(
            subprocess.Popen(
                [*PREFECT, "worker", "start", "--pool", pool, "--type", "process"],
                cwd=REPO_ROOT,
                env=stack_env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )
    try:
        yield logs
    finally:
        for worker in started:
            stop(worker, grace_s=30)


@pytest.fixture
def local_stack(tmp_path: Path) -> Iterator[dict[str, str]]:
    """The environment of a stack under ``tmp_path`` as infra/stack/up.sh and down.sh read it (its own port,
    home and state), with this process's Prefect client pointed at it; down.sh runs at the end, whatever failed."""
    port = free_port()
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "PRETRAIN_STACK_DIR": str(tmp_path / "stack"),
        "PRETRAIN_STACK_PORT": str(port),
        "PRETRAIN_STACK_GRACE_S": "30",
        "PREFECT_HOME": str(tmp_path / "home"),
        "PREFECT_WORKER_QUERY_SECONDS": "1",
    }
    env.pop("PREFECT_API_URL", None)
    with temporary_settings(updates={PREFECT_API_URL: f"http://127.0.0.1:{port}/api"}):
        yield env
    run_stack_script("down.sh", env)
