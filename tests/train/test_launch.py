from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest
from prefect import flow

from pretrain_core import storage
from pretrain_core.train.config import TrainConfig
from pretrain_core.train.launch.torchrun import run_torchrun, torchrun_command
from tasks.training import launch_training

ENV = {"OMP_NUM_THREADS": "1"}

# Stands in for a hung training step: records its pid, ignores SIGTERM, sleeps forever.
STUBBORN = textwrap.dedent(
    """
    import os, signal, sys, time
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    open(os.path.join(sys.argv[1], f"pid-{os.getpid()}"), "w").close()
    time.sleep(600)
    """
)


def test_single_node_uses_standalone_and_multi_node_uses_c10d() -> None:
    single = torchrun_command(TrainConfig(nproc_per_node=2), "/cfg/train.json")
    assert single[:3] == [sys.executable, "-m", "torch.distributed.run"]
    assert "--standalone" in single and "--nproc-per-node=2" in single
    assert single[-4:] == ["-m", "pretrain_core.train", "--config", "/cfg/train.json"]
    multi = torchrun_command(TrainConfig(nnodes=4, rdzv_endpoint="head:29400", output_url="s3://b/r1"), "c.yaml")
    assert "--standalone" not in multi
    assert {"--nnodes=4", "--rdzv-backend=c10d", "--rdzv-endpoint=head:29400"} <= set(multi)
    rdzv_id = next(arg for arg in multi if arg.startswith("--rdzv-id="))
    # every node derives the same id from the shared output URL
    assert rdzv_id == next(
        arg
        for arg in torchrun_command(TrainConfig(nnodes=4, rdzv_endpoint="head:29400", output_url="s3://b/r1"), "x")
        if arg.startswith("--rdzv-id=")
    )


def _gone(pids: list[int]) -> bool:
    return all(not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE for pid in pids)


def test_timeout_kills_every_process_of_the_tree(tmp_path: Path) -> None:
    worker = tmp_path / "stubborn.py"
    worker.write_text(STUBBORN)
    # a parent that, like torchrun, starts its workers in sessions of their own
    parent = (
        "import subprocess, sys, time\n"
        f"procs = [subprocess.Popen([sys.executable, {str(worker)!r}, {str(tmp_path)!r}], start_new_session=True)"
        " for _ in range(2)]\n"
        "time.sleep(600)\n"
    )
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        run_torchrun([sys.executable, "-c", parent], timeout_s=4, grace_s=1)
    assert time.monotonic() - started < 20
    pids = [int(p.name.split("-")[1]) for p in tmp_path.glob("pid-*")]
    assert len(pids) == 2 and _gone(pids)


def test_cancel_terminates_torchrun_and_its_workers(tmp_path: Path) -> None:
    worker = tmp_path / "stubborn.py"
    worker.write_text(STUBBORN)
    cancel = threading.Event()

    def cancel_once_workers_run() -> None:
        while len(list(tmp_path.glob("pid-*"))) < 2:
            time.sleep(0.1)
        cancel.set()

    threading.Thread(target=cancel_once_workers_run, daemon=True).start()
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2", str(worker)]
    rc = run_torchrun([*cmd, str(tmp_path)], env=ENV, timeout_s=120, cancel=cancel, grace_s=2)
    assert cancel.is_set() and rc != 0
    pids = [int(p.name.split("-")[1]) for p in tmp_path.glob("pid-*")]
    assert len(pids) == 2 and _gone(pids)


# A worker that exits on SIGTERM, as training does after its checkpoint.
POLITE = textwrap.dedent(
    """
    import os, sys, time
    open(os.path.join(sys.argv[1], f"pid-{os.getpid()}"), "w").close()
    time.sleep(600)
    """
)


@pytest.mark.skipif(sys.platform != "linux", reason="parent-death signal is Linux only")
def test_killing_the_supervisor_outright_still_stops_torchrun_and_its_workers(tmp_path: Path) -> None:
    worker = tmp_path / "polite.py"
    worker.write_text(POLITE)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2", str(worker)]
    supervisor = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from pretrain_core.train.launch.torchrun import run_torchrun; "
            "run_torchrun(sys.argv[1:], env={'OMP_NUM_THREADS': '1'})",
            *cmd,
            str(tmp_path),
        ],
        env={**os.environ, **ENV},
    )
    try:
        deadline = time.monotonic() + 60
        while len(list(tmp_path.glob("pid-*"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        pids = [int(p.name.split("-")[1]) for p in tmp_path.glob("pid-*")]
        assert len(pids) == 2, "workers never started"
        torchrun = [
            c for c in psutil.Process(supervisor.pid).children() if "torch.distributed.run" in " ".join(c.cmdline())
        ]
        assert len(torchrun) == 1
        supervisor.send_signal(signal.SIGKILL)  # no handler runs: only the kernel can tell torchrun
        supervisor.wait()
        deadline = time.monotonic() + 30  # torchrun gives its workers time to exit on SIGTERM
        while not _gone([torchrun[0].pid, *pids]) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _gone([torchrun[0].pid, *pids])
    finally:
        if supervisor.poll() is None:
            supervisor.kill()


@pytest.mark.usefixtures("prefect_harness")
def test_a_caller_watching_validation_losses_stops_the_run_which_saves_and_reports_no_failure(
    tiny_config: Callable[..., TrainConfig],
) -> None:
    """What a sweep's pruning does: the task hands every validation loss to ``stop_when``; on True the workers are
    stopped as on SIGTERM (they checkpoint and exit) and the task returns instead of raising."""
    config = tiny_config(max_steps=400, eval_every=4, checkpoint_every=400, checkpoint_every_minutes=None)
    seen: list[tuple[int, float]] = []

    def stop_when(step: int, validation_loss: float) -> bool:
        seen.append((step, validation_loss))
        return step >= 8

    @flow
    def pruned() -> list[str]:
        return launch_training(config, run_name="stopped-by-caller", stop_when=stop_when)

    checkpoints = pruned()
    summary = storage.read_json(storage.join(config.output_url, "train_summary.json"))
    assert [step for step, _ in seen][:3] == [0, 4, 8] and summary["status"] == "stopped"
    assert 8 <= summary["steps"] < 400 and len(checkpoints) == 1
