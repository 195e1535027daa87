"""A data stage's shards mapped over a real Dask LocalCluster, or over local worker processes, give the same bytes as
an in-process run."""

from __future__ import annotations

from pathlib import Path

import pytest
from prefect import flow, unmapped

from pretrain_core.config import PipelineConfig, load_config
from pretrain_core.pipeline import CorpusPipeline
from tasks.corpus import fit_for_stage, plan_stage, run_stage_shard, write_stage_manifest
from tasks.runners import task_runner_for


@flow
def clean_on_runner(cfg: PipelineConfig) -> int:
    artifacts = fit_for_stage(cfg, "clean")
    plan = plan_stage(cfg, "clean")
    records = run_stage_shard.map(unmapped(cfg), unmapped("clean"), list(plan.jobs), unmapped(artifacts)).result()
    return write_stage_manifest(cfg, plan, records, artifacts).docs_out


@pytest.mark.usefixtures("prefect_harness")
@pytest.mark.parametrize(
    ("setting", "runner_name"),
    [("execution.dask_local_workers=2", "DaskTaskRunner"), ("execution.processes=2", "ProcessPoolTaskRunner")],
)
def test_clean_stage_on_workers_matches_in_process(
    small_config_file: Path, tmp_path: Path, setting: str, runner_name: str
) -> None:
    elsewhere = load_config(small_config_file, [f"storage.root={tmp_path / 'workers'}", setting])
    local = load_config(small_config_file, [f"storage.root={tmp_path / 'local'}"])
    for cfg in (elsewhere, local):
        CorpusPipeline(cfg).run_stage("ingest")
    runner = task_runner_for(elsewhere.execution)
    assert type(runner).__name__ == runner_name

    kept = clean_on_runner.with_options(task_runner=runner)(elsewhere)
    expected = CorpusPipeline(local).run_stage("clean")

    assert kept == expected.docs_out > 0
    worker_files = sorted((tmp_path / "workers" / "corpus" / "clean" / "data").glob("*.parquet"))
    local_files = sorted((tmp_path / "local" / "corpus" / "clean" / "data").glob("*.parquet"))
    assert len(worker_files) > 1 and [p.name for p in worker_files] == [p.name for p in local_files]
    assert all(a.read_bytes() == b.read_bytes() for a, b in zip(worker_files, local_files, strict=True))
