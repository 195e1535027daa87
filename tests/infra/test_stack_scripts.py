"""infra/stack/up.sh and down.sh as an operator runs them: down.sh with a training run in flight leaves no process
of the stack (flow-run engine, torchrun and its ranks run in sessions of their own) and the run Cancelled with its
SIGTERM checkpoint; a run whose processes died with the whole stack is marked Crashed by the next up.sh."""

from __future__ import annotations

import json
import re
from pathlib import Path
from uuid import UUID

import psutil
import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.objects import StateType

from pretrain_core.train.checkpoint.catalog import completed_checkpoints
from tests.flows.test_train_flow import tiny_params
from tests.infra.processes import run_stack_script, stack_script
from tests.infra.test_operations import _launch_train, _training_processes, _wait_for
from tests.train.token_corpus import TokenData, build_token_data

pytestmark = pytest.mark.slow  # three stack starts (server, deploy, workers) and two training runs


lifecycle = stack_script("lifecycle")


@pytest.fixture(scope="module")
def token_data(tmp_path_factory: pytest.TempPathFactory) -> TokenData:
    return build_token_data(str(tmp_path_factory.mktemp("token-data")))


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
    token_data: TokenData, tmp_path: Path, local_stack: dict[str, str]
) -> None:
    run_stack_script("up.sh", local_stack)
    stack_id = (tmp_path / "stack" / "stack-id").read_text().strip()
    cancelled = _start_training(token_data, tmp_path, "down-in-flight")

    run_stack_script("down.sh", local_stack)
    assert lifecycle.stack_processes(stack_id) == [] and _training_processes(str(tmp_path)) == []
    summary = json.loads((tmp_path / "down-in-flight" / "train_summary.json").read_text())
    newest = completed_checkpoints(str(tmp_path / "down-in-flight"))[-1][0]
    assert summary["status"] == "stopped" and newest == summary["steps"]  # the checkpoint taken on SIGTERM

    assert "no run lost its process" in run_stack_script("up.sh", local_stack)
    assert _state(cancelled)[0] == StateType.CANCELLED
    lost = _start_training(token_data, tmp_path, "died-with-the-stack")
    # the host goes down: server, workers, engine and ranks at once, none with a chance to report (no SIGTERM)
    killed = lifecycle.stack_processes(stack_id)
    for process in killed:
        process.kill()
    psutil.wait_procs(killed, timeout=30)
    run_stack_script("down.sh", local_stack)  # clears the pids of the dead stack
    restarted = run_stack_script("up.sh", local_stack)
    # up.sh marks it Crashed as soon as the server is up; on a slow restart the crash automation, which the server
    # resumes, may find its heartbeat silent first. Either way the run ends Crashed, not Running forever.
    state, message = _wait_for(lambda: _state(lost)[0] == StateType.CRASHED and _state(lost), 120, "the run Crashed")
    assert state == StateType.CRASHED
    # up.sh names every run it marked; an evaluation the lost run's checkpoint started may have died with it too
    marked = re.search(r"marked Crashed \(process gone\): (.*)", restarted)
    by_up = marked is not None and "died-with-the-stack" in marked.group(1).split(", ")
    assert by_up == ("its process is gone" in message)
