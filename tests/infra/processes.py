"""Processes of a local Prefect stack in tests: a free port, a health wait, a graceful stop."""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from types import ModuleType

PREFECT = [sys.executable, "-m", "prefect"]
STACK = Path(__file__).resolve().parents[2] / "infra" / "stack"


def stack_script(name: str) -> ModuleType:
    """A script of infra/stack (down.sh and up.sh run them; infra/ is no package), imported by path."""
    spec = importlib.util.spec_from_file_location(f"stack_{name}", STACK / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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


def run_stack_script(name: str, env: dict[str, str]) -> str:
    """Run infra/stack/NAME as an operator would; its output, or a failed assertion with it."""
    done = subprocess.run(
        [str(STACK / name)], cwd=STACK.parents[1], env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout
