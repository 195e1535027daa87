"""Start training under torchrun and supervise it: stream its output, and on timeout, Ctrl-C or cancellation
terminate the whole process tree (torchrun starts its workers in sessions of their own, so killing torchrun's
group alone would orphan them).

Termination is SIGTERM first (workers checkpoint and exit, see preemption.py), SIGKILL after a grace period.
On Linux torchrun also gets SIGTERM from the kernel when its supervisor dies, even by SIGKILL, which no handler sees.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import IO

import psutil

from pretrain_core import storage
from pretrain_core.train.config import TrainConfig

log = logging.getLogger(__name__)


def torchrun_command(config: TrainConfig, config_path: str) -> list[str]:
    """torchrun arguments for this node; every node runs the same command (c10d rendezvous at rdzv_endpoint).

    ``config_path`` may be any URL the workers can read, e.g. the one `write_config` returns.
    """
    cmd = [sys.executable, "-m", "torch.distributed.run", f"--nproc-per-node={config.launch.nproc_per_node}"]
    if config.launch.rdzv_endpoint is None:
        cmd.append("--standalone")
    else:
        rdzv_id = config.launch.rdzv_id or hashlib.sha256(config.output_url.encode()).hexdigest()[:16]
        cmd += [
            f"--nnodes={config.launch.nnodes}",
            "--rdzv-backend=c10d",
            f"--rdzv-endpoint={config.launch.rdzv_endpoint}",
            f"--rdzv-id={rdzv_id}",
        ]
    return [*cmd, "-m", "pretrain_core.train", "--config", config_path]


def write_config(config: TrainConfig) -> str:
    """Store the resolved config as `<output_url>/train_config.json`, where every node's workers can read it."""
    url = storage.join(config.output_url, "train_config.json")
    storage.write_json(url, config.model_dump(mode="json"))
    return url


def _stream(stream: IO[str], name: str, on_line: Callable[[str], None] | None) -> None:
    for line in stream:
        if on_line is None:
            log.info("[%s] %s", name, line.rstrip())
        else:
            on_line(line.rstrip())


def _tree(pid: int) -> list[psutil.Process]:
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def _signal_all(members: list[psutil.Process], sig: int) -> None:
    for member in members:
        with contextlib.suppress(psutil.NoSuchProcess):
            member.send_signal(sig)


def _alive(member: psutil.Process) -> bool:
    try:
        return member.is_running() and member.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _terminate_tree(proc: subprocess.Popen[str], grace_s: float) -> None:
    """SIGTERM the process and every descendant, wait up to ``grace_s``, then SIGKILL whatever is left.

    The tree is re-read while its root lives, so workers spawned after the first signal are not missed.
    """
    seen = {member.pid: member for member in _tree(proc.pid)}
    _signal_all(list(seen.values()), signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if proc.poll() is None:
            for member in _tree(proc.pid):
                if member.pid not in seen:
                    seen[member.pid] = member
                    _signal_all([member], signal.SIGTERM)
        if not any(_alive(member) for member in seen.values()):
            break
        time.sleep(0.1)
    _signal_all([member for member in seen.values() if _alive(member)], signal.SIGKILL)
    proc.wait()  # reap our child through Popen (psutil reaping it would lose the exit code), then the rest
    psutil.wait_procs([member for pid, member in seen.items() if pid != proc.pid], timeout=5)


def _terminate_with_parent() -> None:
    """Runs in the child between fork and exec: ask the kernel for SIGTERM when the parent thread dies. The thread
    that starts torchrun waits for it in ``run_torchrun``, so it outlives torchrun unless the process is killed."""
    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


def run_torchrun(
    cmd: list[str],
    env: Mapping[str, str] | None = None,
    timeout_s: float | None = None,
    cancel: threading.Event | None = None,
    grace_s: float = 30.0,
    name: str = "torchrun",
    on_line: Callable[[str], None] | None = None,
) -> int:
    """Run ``cmd`` in its own session, log its output line by line (or hand each line to ``on_line``, called from
    a reader thread), and return its exit code.

    ``env`` is added to the current environment. When ``cancel`` is set, the tree is terminated and the exit code
    returned; past ``timeout_s`` it is terminated and TimeoutError raised; KeyboardInterrupt terminates and re-raises.
    """
    proc = subprocess.Popen(
        cmd,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        preexec_fn=_terminate_with_parent if sys.platform == "linux" else None,
    )
    assert proc.stdout is not None
    reader = threading.Thread(target=_stream, args=(proc.stdout, name, on_line), daemon=True)
    reader.start()
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    try:
        while proc.poll() is None:
            if cancel is not None and cancel.is_set():
                log.warning("%s: cancelled, terminating", name)
                _terminate_tree(proc, grace_s)
                break
            if deadline is not None and time.monotonic() > deadline:
                log.error("%s: timed out after %.0fs, terminating", name, timeout_s)
                _terminate_tree(proc, grace_s)
                raise TimeoutError(f"{name} ran longer than {timeout_s}s and was terminated")
            time.sleep(0.2)
    except KeyboardInterrupt:
        _terminate_tree(proc, grace_s)
        raise
    finally:
        reader.join(timeout=5)
    return proc.returncode
