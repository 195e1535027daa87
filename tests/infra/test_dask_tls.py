"""The Dask cluster `infra/dask/start-cluster.sh` starts is closed by default: loopback and mutual TLS. The
pipeline's client, given `execution.dask_tls`, gets in; a plain-TCP client and a TLS client whose certificate
another CA signed are refused."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from distributed import Client, Security

from pretrain_core.cluster_certs import make_certificates
from pretrain_core.cluster_tls import DaskTlsConfig
from pretrain_core.config import ExecutionConfig
from tasks.runners import worker_count

SCRIPT = Path(__file__).resolve().parents[2] / "infra" / "dask" / "start-cluster.sh"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start(role: str, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            [str(SCRIPT)], env={**env, "ROLE": role}, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, DaskTlsConfig, Path]]:
    """A scheduler and one worker started by the script with its defaults and fresh certificates."""
    root = tmp_path_factory.mktemp("dask-tls")
    tls = make_certificates(root / "tls", hosts=[])
    port = _free_port()
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "TLS_DIR": str(root / "tls"),
        "PORT": str(port),
        "DASHBOARD_PORT": str(_free_port()),
        "WORKERS": "1",
    }
    processes = [_start("scheduler", env, root / "scheduler.log")]
    address = f"tls://127.0.0.1:{port}"
    try:
        _wait_for_scheduler(address, tls, root / "scheduler.log")
        processes.append(_start("worker", env, root / "worker.log"))
        yield address, tls, root
    finally:
        for process in reversed(processes):
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=30)


def _wait_for_scheduler(address: str, tls: DaskTlsConfig, log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if "Scheduler at:" in log.read_text(errors="replace"):
            return
        time.sleep(0.2)
    raise AssertionError(f"the scheduler did not start: {log.read_text(errors='replace')}")


def test_the_scheduler_listens_over_tls_and_both_it_and_its_dashboard_on_loopback(
    cluster: tuple[str, DaskTlsConfig, Path],
) -> None:
    address, _, root = cluster
    log = (root / "scheduler.log").read_text()
    assert re.search(rf"Scheduler at: +{re.escape(address)}\n", log), log
    assert re.search(r"dashboard at: +http://127\.0\.0\.1:\d+/status", log), log


def test_the_pipelines_client_with_the_certificates_reaches_the_workers(
    cluster: tuple[str, DaskTlsConfig, Path],
) -> None:
    address, tls, _ = cluster
    execution = ExecutionConfig(dask_address=address, dask_tls=tls)
    deadline = time.monotonic() + 60
    while (workers := worker_count(execution)) < 1 and time.monotonic() < deadline:
        time.sleep(0.5)  # the worker process is still connecting
    assert workers == 1


def test_a_plain_tcp_client_is_refused(cluster: tuple[str, DaskTlsConfig, Path]) -> None:
    address, _, _ = cluster
    with pytest.raises(OSError):
        Client(address.replace("tls://", "tcp://"), timeout="3s", set_as_default=False)


def test_a_certificate_from_another_ca_is_refused(cluster: tuple[str, DaskTlsConfig, Path], tmp_path: Path) -> None:
    address, _, _ = cluster
    stranger = make_certificates(tmp_path / "other", hosts=[])
    security = Security(
        tls_ca_file=stranger.ca_file,
        tls_client_cert=stranger.cert_file,
        tls_client_key=stranger.key_file,
        require_encryption=True,
    )
    with pytest.raises(OSError):
        Client(address, security=security, timeout="3s", set_as_default=False)


def test_without_certificates_the_script_says_how_to_make_them(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(SCRIPT)], env={**os.environ, "ROLE": "scheduler", "TLS_DIR": str(tmp_path)}, capture_output=True, text=True
    )
    assert done.returncode == 2 and f"pretrain dask-certs --output {tmp_path}" in done.stderr


def test_plain_tcp_off_this_machine_is_refused_unless_asked_for() -> None:
    with pytest.raises(ValueError, match="plain-TCP scheduler off this machine"):
        ExecutionConfig(dask_address="tcp://10.0.0.5:8786")
    with pytest.raises(ValueError, match=r"needs execution\.dask_tls"):
        ExecutionConfig(dask_address="tls://10.0.0.5:8786")
    assert ExecutionConfig(dask_address="tcp://10.0.0.5:8786", dask_insecure=True).dask_insecure
    assert ExecutionConfig(dask_address="tcp://127.0.0.1:8786").dask_address  # loopback: this machine only


def test_certificates_are_not_overwritten_and_keys_stay_private(tmp_path: Path) -> None:
    tls = make_certificates(tmp_path, hosts=["10.0.0.5", "scheduler.internal"])
    assert oct(Path(tls.key_file).stat().st_mode & 0o777) == "0o600"
    with pytest.raises(FileExistsError, match="already holds"):
        make_certificates(tmp_path, hosts=[])
