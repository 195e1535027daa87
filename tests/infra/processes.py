"""Processes of a local Prefect stack in tests: a free port, a health wait, a graceful stop."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request

PREFECT = [sys.executable, "-m", "prefect"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_healthy(api_url: str, server: subprocess.Popen[bytes], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"prefect server exited with {server.returncode}")
        try:
            with urllib.request.urlopen(f"{api_url}/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise TimeoutError(f"prefect server not healthy after {timeout_s} s")


def stop(process: subprocess.Popen[bytes], grace_s: float = 15) -> None:
    process.terminate()
    try:
        process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
