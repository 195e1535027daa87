"""corpus-rebuild: every corpus stage in order, its fit's per-shard part and its shards mapped over the task runner
in groups of jobs (`pretrain_core.job_groups`); finished work is skipped."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from prefect import flow, unmapped
from prefect.futures import PrefectFutureList
from prefect.runtime import flow_run

from pretrain_core.config import PipelineConfig, load_config
from pretrain_core.job_groups import JobGroup, Keyed, group_jobs, in_job_order, jobs_per_task
from pretrain_core.manifest import StageManifest
from pretrain_core.pipeline import CORPUS_STAGES, CorpusPipeline, resolve_processes
from pretrain_core.root_lock import root_lock
from tasks.card import write_data_card
from tasks.corpus import (
    fit_for_stage,
    plan_fit_maps,
    plan_fit_reduce,
    plan_stage,
    run_fit_maps,
    run_fit_reduce_jobs,
    run_stage_shards,
    stage_status,
    write_stage_manifest,
)
from tasks.progress import artifact_key, results_with_progress
from tasks.runners import api_shared_with_workers, task_runner_for, worker_count

J = TypeVar("J", bound=Keyed)
R = TypeVar("R")


@flow(name="corpus-rebuild-stages", log_prints=True)
def rebuild_stages(cfg: PipelineConfig) -> dict[str, StageManifest]:
    """Run the stages of an already-loaded config on the flow's task runner, then write the build's data card."""
    workers = worker_count(cfg.execution)
    manifests = {name: run_stage_on_runner(cfg, name, workers) for name in CORPUS_STAGES}
    write_data_card(cfg)
    return manifests


def run_stage_on_runner(cfg: PipelineConfig, name: str, workers: int | None = None) -> StageManifest:
    """One stage inside a flow: skipped when done; else its fit's per-shard part, the rounds of a partitioned
    reduce and then its shards mapped over the flow's task runner (`workers` of them; asked of the config when
    None), the fit's last step and the manifest in between and after."""
    done = stage_status(cfg, name)
    if done is not None:
        return done
    workers = worker_count(cfg.execution) if workers is None else workers
    fit_jobs = plan_fit_maps(cfg, name)
    if fit_jobs:  # the per-shard part of the stage's fit, on the same workers as the shards
        fit_groups = _grouped(cfg, fit_jobs, workers)
        fitted = run_fit_maps.map(unmapped(cfg), unmapped(name), fit_groups)
        _wait(fitted, fit_groups, cfg, name, "fit-progress", f"{name}: fit shards done")
    while reduce_jobs := plan_fit_reduce(cfg, name):  # a partitioned reduce's rounds, each mapped the same way
        reduce_groups = _grouped(cfg, reduce_jobs, workers)
        reduced = run_fit_reduce_jobs.map(unmapped(cfg), unmapped(name), reduce_groups)
        what = f"{name}: reduce round {reduce_jobs[0].round}, jobs done"
        _wait(reduced, reduce_groups, cfg, name, "reduce-progress", what)
    artifacts = fit_for_stage(cfg, name)
    plan = plan_stage(cfg, name)
    groups = _grouped(cfg, plan.jobs, workers)
    futures = run_stage_shards.map(unmapped(cfg), unmapped(name), groups, unmapped(artifacts))
    by_group = _wait(futures, groups, cfg, name, "progress", f"{name}: shards done")
    records = in_job_order(groups, by_group)
    return write_stage_manifest(cfg, plan, records, artifacts)


def _grouped(cfg: PipelineConfig, jobs: Sequence[J], workers: int) -> list[JobGroup[J]]:
    return group_jobs(jobs, jobs_per_task(len(jobs), workers, cfg.execution.jobs_per_task))


def _wait(
    futures: PrefectFutureList[R], groups: list[JobGroup[Any]], cfg: PipelineConfig, name: str, key: str, what: str
) -> list[R]:
    """The groups' results, with a progress artifact (`key`) and bar counting their jobs."""
    jobs = [len(group.jobs) for group in groups]
    return results_with_progress(futures, artifact_key(cfg.name, name, key), f"{what} of {sum(jobs)}", jobs)


@flow(name="corpus-rebuild", log_prints=True)
def corpus_rebuild(config_path: str | None = None, overrides: list[str] | None = None) -> dict[str, StageManifest]:
    """Rebuild the corpus from raw sources to packed token shards.

    Args:
        config_path: pipeline YAML; the embedded demo config when empty.
        overrides: dotted overrides such as `dedup.minhash.threshold=0.7`.
    """
    cfg = load_config(config_path, overrides)
    return run_corpus(cfg)


def run_corpus(cfg: PipelineConfig) -> dict[str, StageManifest]:
    """Run the stages with the task runner the config's execution section asks for (worker processes on every
    core by default, threads for a small corpus), holding the output root for this config (a run of another
    config there is refused; see `pretrain_core.root_lock`)."""
    cfg = resolve_processes(cfg)
    fingerprint = CorpusPipeline(cfg).fingerprint()
    what = f"flow run {flow_run.get_name() or 'outside Prefect'}"
    with root_lock(cfg.storage.root, fingerprint, what=what), api_shared_with_workers():
        return rebuild_stages.with_options(task_runner=task_runner_for(cfg.execution))(cfg)
