"""A concurrency slot held by a process killed outright comes back, even across a server restart, when the server
keeps leases on disk as infra/stack/up.sh configures it (the in-memory default forgets them on restart and the slot
is never given back)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.infra.processes import PREFECT, free_port, stop, wait_healthy

pytestmark = pytest.mark.slow  # two server starts and a lease of 60 s (the shortest the server grants) to run out

HOLDER = """
from prefect.concurrency.sync import concurrency
import time
with concurrency("gpu", occupy=1, lease_duration=60, strict=True):
    print("held", flush=True)
    time.sleep(3600)
"""


def _server(env: dict[str, str], port: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*PREFECT, "server", "start", "--host", "127.0.0.1", "--port", str(port)],
        env={k: v for k, v in env.items() if k != "PREFECT_API_URL"},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip


def _active_slots(env: dict[str, str]) -> int:
    shown = subprocess.run(
        [*PREFECT, "gcl", "inspect", "gpu", "--output", "json"], env=env, capture_output=True, text=True, check=True
    )
    return int(json.loads(shown.stdout)["active_slots"])


def test_a_killed_holders_slot_comes_back_across_a_server_restart(tmp_path: Path) -> None:
    port = free_port()
    api = f"http://127.0.0.1:{port}/api"
    env = {
        **os.environ,
        "PREFECT_HOME": str(tmp_path / "home"),
        "PREFECT_API_URL": api,
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_SERVER_UI_ENABLED": "false",
        "PREFECT_SERVER_CONCURRENCY_LEASE_STORAGE": "prefect.server.concurrency.lease_storage.filesystem",
    }
    server = _server(env, port)
    try:
        wait_healthy(api, server, timeout_s=90)
        subprocess.run([*PREFECT, "gcl", "create", "gpu", "--limit", "1"], env=env, check=True, capture_output=True)
        holder = subprocess.Popen([sys.executable, "-c", HOLDER], env=env, stdout=subprocess.PIPE, text=True)
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert _active_slots(env) == 1
        holder.send_signal(signal.SIGKILL)
        holder.wait()
        stop(server)
        server = _server(env, port)
        wait_healthy(api, server, timeout_s=90)
        deadline = time.monotonic() + 150  # the lease's 60 s, the repossessor's 15 s scan, and slack
        while _active_slots(env) != 0:
            assert time.monotonic() < deadline, "the slot of the killed holder never came back"
            time.sleep(5)
    finally:
        stop(server)
