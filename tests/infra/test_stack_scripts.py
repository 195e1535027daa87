"""infra/stack/up.sh and down.sh as an operator runs them: down.sh with a training run in flight leaves no process
of the stack (flow-run engine, torchrun and its ranks run in sessions of their own) and the run Cancelled with its
SIGTERM checkpoint; a run whose processes died with the whole stack is marked Crashed by the next up.sh."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from uuid import UUID

import psutil
import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.objects import StateType
from prefect.settings import PREFECT_API_URL, temporary_settings

from pretrain_core.train.checkpoint import completed_checkpoints
from tests.flows.test_train_flow import tiny_params
from tests.infra.processes import STACK, free_port, stack_script
from tests.infra.test_operations import _launch_train, _training_processes, _wait_for
from tests.shipped_text import REPO_ROOT
from tests.train.token_corpus import TokenData, build_token_data

pytestmark = pytest.mark.slow  # three stack starts (server, deploy, workers) and two training runs


lifecycle = stack_script("lifecycle")


@pytest.fixture(scope="module")
def token_data(tmp_path_factory: pytest.TempPathFactory) -> TokenData:
    return build_token_data(str(tmp_path_factory.mktemp("token-data")))


@pytest.fixture
def stack_env(tmp_path: Path) -> Iterator[dict[str, str]]:
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
    _script("down.sh", env)  # whatever a failed assertion left running


def _script(name: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        [str(STACK / name)], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _start_training(token_data: TokenData, tmp_path: Path, name: str) -> UUID:
    """Launch a long run and return once it trains (its first checkpoint, at step 20, is complete)."""
    params = tiny_params(token_data, tmp_path, run_name=name, max_steps=1_000_000, checkpoint_every=20)
    with get_client(sync_client=True) as client:
        flow_run_id = _launch_train(client, params.model_dump(mode="json"))
    _wait_for(lambda: completed_checkpoints(str(tmp_path / name)), timeout_s=240, what="training under way")
    return flow_run_id


def _state(flow_run_id: UUID) -> tuple[StateType | None, str]:
    with get_client(sync_client=True) as client:
        state = client.read_flow_run(flow_run_id).state
    return (state.type, state.message or "") if state is not None else (None, "")


def test_down_stops_every_process_of_a_run_in_flight_and_up_crashes_runs_that_died_with_the_stack(
    token_data: TokenData, tmp_path: Path, stack_env: dict[str, str]
) -> None:
    _script("up.sh", stack_env)
    stack_id = (tmp_path / "stack" / "stack-id").read_text().strip()
    cancelled = _start_training(token_data, tmp_path, "down-in-flight")

    _script("down.sh", stack_env)
    assert lifecycle.stack_processes(stack_id) == [] and _training_processes(str(tmp_path)) == []
    summary = json.loads((tmp_path / "down-in-flight" / "train_summary.json").read_text())
    newest = completed_checkpoints(str(tmp_path / "down-in-flight"))[-1][0]
    assert summary["status"] == "stopped" and newest == summary["steps"]  # the checkpoint taken on SIGTERM

    assert "no run lost its process" in _script("up.sh", stack_env)
    assert _state(cancelled)[0] == StateType.CANCELLED
    lost = _start_training(token_data, tmp_path, "died-with-the-stack")
    # the host goes down: server, workers, engine and ranks at once, none with a chance to report (no SIGTERM)
    killed = lifecycle.stack_processes(stack_id)
    for process in killed:
        process.kill()
    psutil.wait_procs(killed, timeout=30)
    _script("down.sh", stack_env)  # clears the pids of the dead stack
    assert "marked Crashed (process gone): died-with-the-stack" in _script("up.sh", stack_env)
    state, message = _state(lost)
    assert state == StateType.CRASHED and "its process is gone" in message
