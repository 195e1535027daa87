"""Data stages mapped over a real Dask LocalCluster, or over local worker processes (shards, and dedup's per-shard
fit), give the same bytes as an in-process run."""

from __future__ import annotations

from pathlib import Path

import pytest
from prefect import flow

from flows.corpus_rebuild import run_stage_on_runner
from pretrain_core.config import PipelineConfig, load_config
from pretrain_core.pipeline import CorpusPipeline
from tasks.runners import task_runner_for

STAGES = ("clean", "dedup")  # a map-only stage, and one whose fit has a per-shard part


@flow
def stages_on_runner(cfg: PipelineConfig) -> dict[str, int]:
    return {name: run_stage_on_runner(cfg, name).docs_out for name in STAGES}


@pytest.mark.usefixtures("prefect_harness")
@pytest.mark.parametrize(
    ("setting", "runner_name", "both"),
    [
        # on Dask, every shuffle of dedup's reduce through a merge round (a fan-in of 2), on both sides
        ("execution.dask_local_workers=2", "DaskTaskRunner", ["dedup.shuffle_fan_in=2"]),
        ("execution.processes=2", "ProcessPoolTaskRunner", []),
    ],
)
def test_stages_on_workers_match_in_process(
    small_config_file: Path, tmp_path: Path, setting: str, runner_name: str, both: list[str]
) -> None:
    elsewhere = load_config(small_config_file, [f"storage.root={tmp_path / 'workers'}", setting, *both])
    local = load_config(small_config_file, [f"storage.root={tmp_path / 'local'}", *both])
    for cfg in (elsewhere, local):
        CorpusPipeline(cfg).run_stage("ingest")
    runner = task_runner_for(elsewhere.execution)
    assert type(runner).__name__ == runner_name

    kept = stages_on_runner.with_options(task_runner=runner)(elsewhere)
    expected = {name: CorpusPipeline(local).run_stage(name).docs_out for name in STAGES}

    assert kept == expected
    assert (tmp_path / "workers" / "corpus" / "dedup" / "artifacts" / "partials").is_dir()
    merged = list((tmp_path / "workers" / "corpus" / "dedup").rglob("merge_*"))  # the merge rounds' markers
    assert bool(merged) == bool(both)
    for name in STAGES:
        worker_files, local_files = stage_files(tmp_path / "workers", name), stage_files(tmp_path / "local", name)
        assert len(worker_files) > 1 and worker_files == local_files
        for path in worker_files:
            assert (tmp_path / "workers" / path).read_bytes() == (tmp_path / "local" / path).read_bytes(), path


def stage_files(root: Path, name: str) -> list[Path]:
    """A stage's Parquet outputs (data, dropped, artifacts) under `root`, less the fit's partials."""
    found = (root / "corpus" / name).rglob("*.parquet")
    return sorted(p.relative_to(root) for p in found if "partials" not in p.parts)
