"""Operating the pipeline through a real Prefect server and process workers, as ops do from the UI: launch `train`
from its deployment, see each announced checkpoint evaluated by the triggered `evaluate-checkpoint` deployment,
cancel a run with nothing left training, and get the slot of a run killed outright back."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar
from uuid import UUID

import psutil
import pyarrow.parquet as pq
import pytest
from prefect.client.orchestration import SyncPrefectClient, get_client
from prefect.client.schemas.filters import (
    DeploymentFilter,
    DeploymentFilterId,
    FlowRunFilter,
    FlowRunFilterName,
    LogFilter,
    LogFilterFlowRunId,
)
from prefect.client.schemas.objects import FlowRun, StateType
from prefect.events.filters import EventFilter, EventNameFilter, EventResourceFilter
from prefect.states import Cancelling

from pretrain_core.evaluate.history import RESULTS_FILE
from pretrain_core.train.checkpoint.catalog import EVALUATIONS, completed_checkpoints
from tests.flows.test_train_flow import FLOW_SCRIPT, tiny_params
from tests.shipped_text import REPO_ROOT
from tests.train.token_corpus import TokenData, build_token_data

# Server, deploy, two workers, a flow-run process per run (each imports torch) and torchrun: minutes, not seconds.
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("workers")]

T = TypeVar("T")


@pytest.fixture(scope="module")
def token_data(tmp_path_factory: pytest.TempPathFactory) -> TokenData:
    return build_token_data(str(tmp_path_factory.mktemp("token-data")))


def _wait_for(probe: Callable[[], T | None], timeout_s: float, what: str) -> T:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        time.sleep(1)
    raise TimeoutError(f"{what}: not after {timeout_s} s")


def _launch_train(client: SyncPrefectClient, parameters: dict[str, Any]) -> UUID:
    deployment = client.read_deployment_by_name("train/train")
    return client.create_flow_run_from_deployment(deployment.id, parameters={"params": parameters}).id


def _final(client: SyncPrefectClient, flow_run_id: UUID, timeout_s: float) -> FlowRun:
    def probe() -> FlowRun | None:
        run = client.read_flow_run(flow_run_id)
        return run if run.state is not None and run.state.is_final() else None

    return _wait_for(probe, timeout_s, f"flow run {flow_run_id} finished")


def _training_processes(marker: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = " ".join(proc.info["cmdline"] or [])
        if marker in cmdline and "pretrain_core.train" in cmdline:
            found.append(proc)
    return found


def test_a_train_run_launched_through_the_api_gets_each_checkpoint_evaluated(
    token_data: TokenData, tmp_path: Path
) -> None:
    params = tiny_params(token_data, tmp_path, run_name="ops-e2e")
    with get_client(sync_client=True) as client:
        train_run = _final(client, _launch_train(client, params.model_dump(mode="json")), timeout_s=300)
        assert train_run.state is not None and train_run.state.type == StateType.COMPLETED, train_run.state
        assert train_run.name == "ops-e2e"

        evaluate = client.read_deployment_by_name("evaluate-checkpoint/evaluate-checkpoint")
        by_deployment = DeploymentFilter(id=DeploymentFilterId(any_=[evaluate.id]))

        def both_evaluated() -> list[FlowRun] | None:
            runs = client.read_flow_runs(deployment_filter=by_deployment, flow_run_filter=FlowRunFilter())
            done = [r for r in runs if r.state is not None and r.state.is_final()]
            return done if len(done) >= 2 else None

        evaluations = _wait_for(both_evaluated, timeout_s=300, what="both checkpoints evaluated")

    checkpoints = f"{params.output_url}/checkpoints"
    assert sorted((r.parameters["checkpoint_url"], r.parameters["step"]) for r in evaluations) == [
        (f"{checkpoints}/step-00000002", 2),
        (f"{checkpoints}/step-00000004", 4),
    ]
    assert all(r.state is not None and r.state.type == StateType.COMPLETED for r in evaluations)
    results = pq.read_table(tmp_path / RESULTS_FILE).to_pylist()
    assert {(row["run"], row["step"]) for row in results} == {("ops-e2e", 2), ("ops-e2e", 4)}
    assert all(row["perplexity"] > 1 for row in results)


def test_cancelling_a_training_run_leaves_no_training_process(token_data: TokenData, tmp_path: Path) -> None:
    params = tiny_params(token_data, tmp_path, run_name="ops-cancel", max_steps=1_000_000, checkpoint_every=1_000_000)
    with get_client(sync_client=True) as client:
        flow_run_id = _launch_train(client, params.model_dump(mode="json"))
        training = _wait_for(
            lambda: [p for p in _training_processes(str(tmp_path)) if p.is_running()] or None,
            timeout_s=180,
            what="training started",
        )
        client.set_flow_run_state(flow_run_id, Cancelling(), force=True)
        cancelled = _final(client, flow_run_id, timeout_s=120)
    assert cancelled.state is not None and cancelled.state.type == StateType.CANCELLED, cancelled.state
    _, alive = psutil.wait_procs(training, timeout=30)
    assert alive == []
    assert _training_processes(str(tmp_path)) == []


def _flow_process_of(marker: str) -> psutil.Process | None:
    """The flow-run process training under ``marker``: torchrun's parent."""
    for proc in _training_processes(marker):
        if "torch.distributed.run" in " ".join(proc.cmdline()):
            return proc.parent()
    return None


def _heartbeats(client: SyncPrefectClient, flow_run_id: UUID) -> list[Any]:
    """The heartbeat events the server has recorded for one flow run."""
    only = EventFilter(
        event=EventNameFilter(name=["prefect.flow-run.heartbeat"]),
        resource=EventResourceFilter(id=[f"prefect.flow-run.{flow_run_id}"]),
    )
    # limit: the client's default (100) is over the server's cap (50)
    return list(client.read_events(filter=only, limit=1).events)


def _run_log(client: SyncPrefectClient, flow_run_id: UUID) -> list[str]:
    logs = client.read_logs(log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[flow_run_id])))
    return [log.message for log in logs]


def test_a_training_flow_killed_outright_gives_its_slot_back(token_data: TokenData, tmp_path: Path) -> None:
    """SIGKILL reaches no handler: the slot comes back when its lease runs out and the next run, which said it was
    waiting, trains; the worker, which outlived its child, marks the killed run Crashed."""
    killed = tiny_params(token_data, tmp_path, run_name="ops-killed", max_steps=1_000_000, checkpoint_every=1_000_000)
    following = tiny_params(token_data, tmp_path, run_name="ops-after-kill")
    with get_client(sync_client=True) as client:
        killed_id = _launch_train(client, killed.model_dump(mode="json"))
        flow_process = _wait_for(lambda: _flow_process_of(killed.output_url), timeout_s=180, what="training started")
        assert client.read_global_concurrency_limit_by_name("pretrain-gpu").active_slots == 1
        training = _training_processes(killed.output_url)
        flow_process.kill()
        _, alive = psutil.wait_procs([flow_process, *training], timeout=30)
        assert alive == []  # torchrun and its workers die with it (parent-death signal)

        following_id = _launch_train(client, following.model_dump(mode="json"))
        done = _final(client, following_id, timeout_s=400)
        assert done.state is not None and done.state.type == StateType.COMPLETED, done.state
        assert any("waiting for a slot of 'pretrain-gpu'" in m for m in _run_log(client, following_id))

        crashed = _final(client, killed_id, timeout_s=240)
        assert crashed.state is not None and crashed.state.type == StateType.CRASHED, crashed.state
        assert "SIGKILL" in (crashed.state.message or "")
        assert client.read_global_concurrency_limit_by_name("pretrain-gpu").active_slots == 0


def test_a_flow_run_whose_process_died_with_nobody_watching_is_marked_crashed(
    token_data: TokenData, tmp_path: Path, stack_env: dict[str, str]
) -> None:
    """A lost node takes the worker with the flow process: only the missing heartbeats tell, and the stack's
    `crash-unresponsive-runs` automation sets the run Crashed (heartbeats every 30 s, Crashed after 90 s)."""
    params = tiny_params(token_data, tmp_path, run_name="ops-lost", max_steps=1_000_000, checkpoint_every=1_000_000)
    flow_process = subprocess.Popen(
        [sys.executable, "-c", FLOW_SCRIPT, params.model_dump_json()],
        cwd=REPO_ROOT, env={**stack_env, "PYTHONPATH": str(REPO_ROOT)}, start_new_session=True,
    )  # fmt: skip
    try:
        _wait_for(lambda: _flow_process_of(params.output_url), timeout_s=180, what="training started")
        with get_client(sync_client=True) as client:
            (run,) = _wait_for(
                lambda: client.read_flow_runs(flow_run_filter=FlowRunFilter(name=FlowRunFilterName(any_=["ops-lost"]))),
                timeout_s=30,
                what="the run recorded",
            )
            # The automation counts from a heartbeat the server has seen: on a busy machine the first can still be
            # in the flow process's event queue when training starts.
            _wait_for(lambda: _heartbeats(client, run.id), timeout_s=120, what="a heartbeat recorded")
            os.killpg(flow_process.pid, signal.SIGKILL)
            crashed = _final(client, run.id, timeout_s=300)
    finally:
        if flow_process.poll() is None:
            flow_process.kill()
    assert crashed.state is not None and crashed.state.type == StateType.CRASHED, crashed.state
    assert "no heartbeat for 90 s" in (crashed.state.message or "")


def test_every_checkpoint_is_evaluated_once_even_when_evaluation_lags_and_the_run_is_cancelled(
    token_data: TokenData, tmp_path: Path
) -> None:
    """Checkpoints come every ~second, each evaluation takes a flow-run process of its own (one at a time): pruning
    (keep 2) waits for the queue, saves are skipped while 4 checkpoints wait (so at most 2 + 4 + 1 are ever on
    disk), the checkpoint saved on cancel is announced too, and in the end every checkpoint has exactly one
    evaluation record and one triggered run, and only the newest two checkpoints remain."""
    params = tiny_params(
        token_data, tmp_path, run_name="ops-lagging-eval", max_steps=1_000_000, checkpoint_every=40,
        keep_last_checkpoints=2,
    )  # fmt: skip
    run_dir = tmp_path / "ops-lagging-eval"
    with get_client(sync_client=True) as client:
        flow_run_id = _launch_train(client, params.model_dump(mode="json"))
        most_on_disk = 0

        def six_saved() -> bool:
            nonlocal most_on_disk
            most_on_disk = max(most_on_disk, len(completed_checkpoints(str(run_dir))))
            return len(_saved_or_evaluated(run_dir)) >= 6

        _wait_for(six_saved, timeout_s=300, what="6 checkpoints saved")
        client.set_flow_run_state(flow_run_id, Cancelling(), force=True)
        cancelled = _final(client, flow_run_id, timeout_s=120)
        assert cancelled.state is not None and cancelled.state.type == StateType.CANCELLED, cancelled.state
        assert most_on_disk <= 2 + 4 + 1  # keep_last + max_unevaluated_checkpoints + the newest
        # pruning waits for evaluations, so every checkpoint ever saved is still here or evaluated
        every_step = _saved_or_evaluated(run_dir)
        summary = json.loads((run_dir / "train_summary.json").read_text())
        assert summary["status"] == "stopped" and every_step[-1] == summary["steps"] and len(every_step) >= 6

        evaluate = client.read_deployment_by_name("evaluate-checkpoint/evaluate-checkpoint")
        by_deployment = DeploymentFilter(id=DeploymentFilterId(any_=[evaluate.id]))

        def all_done() -> list[FlowRun] | None:
            runs = [
                r for r in client.read_flow_runs(deployment_filter=by_deployment)
                if str(r.parameters.get("checkpoint_url", "")).startswith(str(run_dir))
            ]  # fmt: skip
            finished = [r for r in runs if r.state is not None and r.state.is_final()]
            return finished if len(finished) == len(every_step) == len(runs) else None

        evaluations = _wait_for(all_done, timeout_s=600, what="every checkpoint evaluated")
    assert sorted(r.parameters["step"] for r in evaluations) == every_step  # once each
    assert all(r.state is not None and r.state.type == StateType.COMPLETED for r in evaluations)
    records = sorted(int(p.stem.split("-")[1]) for p in (run_dir / EVALUATIONS).glob("step-*.json"))
    assert records == every_step and not list((run_dir / EVALUATIONS).glob("*.failed.json"))
    assert [step for step, _ in completed_checkpoints(str(run_dir))] == every_step[-2:]  # pruned once evaluated


def _saved_or_evaluated(run_dir: Path) -> list[int]:
    """Steps of the checkpoints on disk or evaluated: with pruning waiting for evaluations, every step ever saved."""
    checkpoints = run_dir / "checkpoints"
    saved = [int(p.name.split("-")[1]) for p in checkpoints.glob("step-*")] if checkpoints.exists() else []
    evaluated = [int(p.stem.split("-")[1]) for p in (run_dir / EVALUATIONS).glob("step-*.json")]
    return sorted(set(saved) | set(evaluated))
