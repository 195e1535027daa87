"""The `train` flow as real Prefect runs on tiny real token shards: typed parameters, checkpoint events read back
from the API, and no process left behind when the flow process is terminated mid-training."""

from __future__ import annotations

import logging
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId, LogFilter, LogFilterFlowRunId
from prefect.events.filters import EventFilter, EventNameFilter, EventResourceFilter
from prefect.settings import PREFECT_API_URL
from prefect.utilities.callables import parameter_schema

from flows.train import train_run
from pretrain_core.train.params import TrainRunParams
from tasks.training import CHECKPOINT_SAVED
from tests.shipped_text import REPO_ROOT
from tests.train.token_corpus import TokenData, build_token_data


@pytest.fixture(scope="module")
def token_data(tmp_path_factory: pytest.TempPathFactory) -> TokenData:
    return build_token_data(str(tmp_path_factory.mktemp("token-data")))


def tiny_params(token_data: TokenData, output_root: Path, **overrides: Any) -> TrainRunParams:
    values: dict[str, Any] = {
        "model": "tiny",
        "max_steps": 4,
        "seq_len": token_data.seq_len,
        "micro_batch_size": 4,
        "warmup_steps": 1,
        "checkpoint_every": 2,
        "num_threads": 1,
        "tokens_url": token_data.tokens_url,
        "tokenizer_url": token_data.tokenizer_url,
        "output_root": str(output_root),
    }
    return TrainRunParams(**{**values, **overrides})


def test_every_parameter_in_the_form_is_described() -> None:
    schema = parameter_schema(train_run.fn).model_dump()
    fields = {**schema["definitions"]["TrainRunParams"]["properties"], **schema["properties"]}
    assert {"params", "concurrency_limit", "lr", "tokens_url", "nproc_per_node"} <= set(fields)
    undescribed = [name for name, spec in fields.items() if name != "params" and not spec.get("description")]
    assert undescribed == []
    assert schema["definitions"]["TrainRunParams"]["properties"]["lr"]["exclusiveMinimum"] == 0
    bounded = [name for name, spec in fields.items() if {"minimum", "maximum", "exclusiveMinimum"} & set(spec)]
    assert "lr" in bounded and all("Allowed:" in fields[name]["description"] for name in bounded)
    assert fields["lr"]["description"].endswith("Allowed: > 0, ≤ 1.")  # the UI shows descriptions, not bounds


def _checkpoint_events(run_name: str) -> list[Any]:
    event_filter = EventFilter(
        event=EventNameFilter(name=[CHECKPOINT_SAVED]),
        resource=EventResourceFilter(id=[f"pretrain.run.{run_name}"]),
    )
    with get_client(sync_client=True) as client:
        return client.read_events(filter=event_filter, limit=50).events  # the server caps pages at 50


@pytest.mark.usefixtures("prefect_harness")
def test_train_flow_announces_each_checkpoint_once(
    token_data: TokenData, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="prefect")  # the suite runs Prefect at WARNING; an operator at INFO
    params = tiny_params(token_data, tmp_path)
    state = train_run(params, concurrency_limit="pretrain-gpu-test", return_state=True)  # limit not created: warns

    checkpoints = state.result()
    assert [url.rsplit("/", 1)[-1] for url in checkpoints] == ["step-00000002", "step-00000004"]
    assert state.state_details.flow_run_id is not None
    with get_client(sync_client=True) as client:
        flow_run = client.read_flow_run(state.state_details.flow_run_id)
    assert re.fullmatch(r"train-tiny-step4-\d{8}", flow_run.name)
    assert flow_run.name == params.run_name

    deadline = time.monotonic() + 20  # the API persists events in batches
    while len(events := _checkpoint_events(params.run_name)) < 2 and time.monotonic() < deadline:
        time.sleep(0.5)
    assert sorted((e.payload["step"], e.payload["checkpoint_url"]) for e in events) == list(
        zip([2, 4], checkpoints, strict=True)
    )

    # What an operator sees in the UI: the workers' lines in the run's log, a progress bar, the loss curve.
    messages = _run_log(state.state_details.flow_run_id, until="training finished")
    assert any(re.search(r"step 4/4 loss=\S+ lr=\S+ grad_norm=\S+ tokens_per_s=", m) for m in messages), messages
    assert any(re.search(r"step 4/4 val_loss=", m) for m in messages)
    assert sum(bool(re.search(r"checkpoint \S+/step-0000000[24]$", m)) for m in messages) == 2
    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(
            artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[state.state_details.flow_run_id]))
        )
    progress = [a for a in artifacts if a.type == "progress"]
    assert [a.data for a in progress] == [100.0]
    assert re.fullmatch(
        rf"{params.run_name}: step 4/4 · loss \S+ · val loss \S+ · [\d,]+ tokens/s · [\d,]+ MB · 0s left",
        progress[0].description or "",
    )
    curve = [a for a in artifacts if a.key == f"loss-curve-{params.run_name}"]
    assert len(curve) == 1 and "data:image/png;base64," in str(curve[0].data)
    assert (tmp_path / params.run_name / "loss_curve.png").read_bytes().startswith(b"\x89PNG")


@pytest.mark.usefixtures("prefect_harness")
def test_a_rerun_announces_what_an_earlier_attempt_did_not_and_nothing_else(
    token_data: TokenData, tmp_path: Path
) -> None:
    """What was announced is recorded beside the run, not inferred from the checkpoints on disk: an attempt killed
    between its last save and its announcement leaves that checkpoint unannounced, and the rerun announces it."""
    params = tiny_params(token_data, tmp_path, run_name="rerun-announces")  # its own events, not another test's
    train_run(params)
    output = tmp_path / params.run_name
    assert sorted(p.name for p in (output / "announced").iterdir()) == ["step-00000002", "step-00000004"]
    (output / "announced" / "step-00000004").unlink()  # as if the flow died before announcing its last save
    train_run(params)  # trained already: nothing to train, but step 4 is still to announce
    assert (output / "announced" / "step-00000004").exists()
    deadline = time.monotonic() + 20
    while len(events := _checkpoint_events(params.run_name)) < 3 and time.monotonic() < deadline:
        time.sleep(0.5)
    assert sorted(e.payload["step"] for e in events) == [2, 4, 4]


def _run_log(flow_run_id: Any, until: str, timeout_s: float = 20) -> list[str]:
    """The flow run's log messages as the API serves them (shipped in batches: wait for the line ``until``)."""
    deadline = time.monotonic() + timeout_s
    while True:
        with get_client(sync_client=True) as client:
            logs = client.read_logs(log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[flow_run_id])))
        messages = [log.message for log in sorted(logs, key=lambda log: log.timestamp)]
        if any(until in m for m in messages) or time.monotonic() > deadline:
            return messages


@pytest.mark.usefixtures("prefect_harness")
def test_a_failed_training_run_ends_its_log_with_the_workers_error(
    token_data: TokenData, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="prefect")
    params = tiny_params(token_data, tmp_path, tokenizer_url=str(tmp_path / "no-such.model"))
    state = train_run(params, return_state=True)

    assert state.is_failed()
    with pytest.raises(RuntimeError, match=r"torchrun exit code 1\): \w+Error: .*no-such\.model"):
        state.result()
    messages = _run_log(state.state_details.flow_run_id, until="the workers' first error")
    assert any(m.startswith("Traceback (most recent call last)") for m in messages)
    error = next(m for m in messages if "the workers' first error" in m)
    assert re.search(r"\w+Error: .*no-such\.model", error)


FLOW_SCRIPT = """
import sys
from flows.train import train_run
from pretrain_core.train.params import TrainRunParams
train_run(TrainRunParams.model_validate_json(sys.argv[1]))
"""


def _our_processes(marker: str) -> list[psutil.Process]:
    """Every process whose command line names this test's output directory (torchrun and its workers)."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if marker in " ".join(proc.info["cmdline"] or []):
            found.append(proc)
    return found


@pytest.mark.usefixtures("prefect_harness")
def test_terminating_the_flow_process_leaves_no_training_process(token_data: TokenData, tmp_path: Path) -> None:
    params = tiny_params(token_data, tmp_path, max_steps=1_000_000, checkpoint_every=1_000_000)
    env = {**os.environ, "PREFECT_API_URL": str(PREFECT_API_URL.value()), "PYTHONPATH": str(REPO_ROOT)}
    flow_process = subprocess.Popen(
        [sys.executable, "-c", FLOW_SCRIPT, params.model_dump_json()], cwd=REPO_ROOT, env=env
    )
    try:
        deadline = time.monotonic() + 60
        workers: list[psutil.Process] = []
        while time.monotonic() < deadline and flow_process.poll() is None:
            family = psutil.Process(flow_process.pid).children(recursive=True)
            workers = [p for p in family if "pretrain_core.train" in " ".join(p.cmdline())]
            if len(workers) >= 2:  # torchrun and its worker
                break
            time.sleep(0.2)
        assert len(workers) >= 2, "training never started"

        flow_process.send_signal(signal.SIGTERM)
        assert flow_process.wait(timeout=40) != 0
        _, alive = psutil.wait_procs(workers, timeout=5)
        assert alive == [] and _our_processes(str(tmp_path)) == []
    finally:
        if flow_process.poll() is None:
            flow_process.kill()
