"""Data stages mapped over a real Dask LocalCluster, or over local worker processes (shards, and dedup's per-shard
fit), give the same bytes as an in-process run, with a Prefect task per group of jobs."""

from __future__ import annotations

import logging
import math
import time
from pathlib import Path

import pytest
from prefect import flow
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId, LogFilter, LogFilterFlowRunId

from flows.corpus_rebuild import run_stage_on_runner
from pretrain_core.config import PipelineConfig, load_config
from pretrain_core.job_groups import jobs_per_task
from pretrain_core.pipeline import CorpusPipeline
from tasks.runners import task_runner_for, worker_count

STAGES = ("clean", "dedup")  # a map-only stage, and one whose fit has a per-shard part


@flow
def stages_on_runner(cfg: PipelineConfig) -> dict[str, int]:
    return {name: run_stage_on_runner(cfg, name).docs_out for name in STAGES}


@pytest.mark.slow  # the corpus flow end to end twice per case, on Dask and worker processes (40-60 s each)
@pytest.mark.usefixtures("prefect_harness")
@pytest.mark.parametrize(
    ("settings", "runner_name", "both"),
    [
        # on Dask, every shuffle of dedup's reduce through a merge round (a fan-in of 2), on both sides; a task for
        # every shard here (4 tasks per worker), for two shards each in processes
        (["execution.dask_local_workers=2"], "DaskTaskRunner", ["dedup.shuffle_fan_in=2"]),
        (["execution.processes=2", "execution.jobs_per_task=2"], "ProcessPoolTaskRunner", []),
    ],
)
def test_stages_on_workers_match_in_process(
    small_config_file: Path,
    tmp_path: Path,
    settings: list[str],
    runner_name: str,
    both: list[str],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # the suite runs Prefect at WARNING; an operator, and these workers (they read it from the environment), at INFO
    monkeypatch.setenv("PREFECT_LOGGING_LEVEL", "INFO")
    caplog.set_level(logging.INFO, logger="prefect")
    elsewhere = load_config(small_config_file, [f"storage.root={tmp_path / 'workers'}", *settings, *both])
    local = load_config(small_config_file, [f"storage.root={tmp_path / 'local'}", *both])
    for cfg in (elsewhere, local):
        CorpusPipeline(cfg).run_stage("ingest")
    runner = task_runner_for(elsewhere.execution)
    assert type(runner).__name__ == runner_name

    state = stages_on_runner.with_options(task_runner=runner)(elsewhere, return_state=True)
    expected = {name: CorpusPipeline(local).run_stage(name).docs_out for name in STAGES}

    assert state.result() == expected
    shards = len(list((tmp_path / "local" / "corpus" / "clean" / "data").glob("*.parquet")))
    per_task = jobs_per_task(shards, worker_count(elsewhere.execution), elsewhere.execution.jobs_per_task)
    assert per_task == (elsewhere.execution.jobs_per_task or 1), shards  # few shards: a task each on Dask
    assert clean_task_runs(state.state_details.flow_run_id) == math.ceil(shards / per_task) > 1
    done_lines = shard_log_lines(state.state_details.flow_run_id, "clean", shards)
    assert len(done_lines) == shards and all("documents in" in line for line in done_lines)
    assert (tmp_path / "workers" / "corpus" / "dedup" / "artifacts" / "partials").is_dir()
    merged = list((tmp_path / "workers" / "corpus" / "dedup").rglob("merge_*"))  # the merge rounds' markers
    assert bool(merged) == bool(both)
    for name in STAGES:
        worker_files, local_files = stage_files(tmp_path / "workers", name), stage_files(tmp_path / "local", name)
        assert len(worker_files) > 1 and worker_files == local_files
        for path in worker_files:
            assert (tmp_path / "workers" / path).read_bytes() == (tmp_path / "local" / path).read_bytes(), path


def clean_task_runs(flow_run_id: object) -> int:
    """How many tasks of the flow run ran clean's shards (named clean-<first shard>[+<more>])."""
    with get_client(sync_client=True) as client:
        runs = client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id])))
    return sum(run.name.startswith("clean-") for run in runs)


def shard_log_lines(flow_run_id: object, stage: str, shards: int, timeout_s: float = 30) -> list[str]:
    """The flow run's "<stage>: shard ... done" log lines as the API serves them (logs are shipped in batches:
    wait until every shard's line came, or the time is up)."""
    deadline = time.monotonic() + timeout_s
    while True:
        with get_client(sync_client=True) as client:
            logs = client.read_logs(log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[flow_run_id])))
        lines = [log.message for log in logs if log.message.startswith(f"{stage}: shard ")]
        if len(lines) >= shards or time.monotonic() > deadline:
            return lines
        time.sleep(0.5)


def stage_files(root: Path, name: str) -> list[Path]:
    """A stage's Parquet outputs (data, dropped, artifacts) under `root`, less the fit's partials."""
    found = (root / "corpus" / name).rglob("*.parquet")
    return sorted(p.relative_to(root) for p in found if "partials" not in p.parts)
