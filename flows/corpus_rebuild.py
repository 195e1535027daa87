"""corpus-rebuild: every corpus stage in order, its fit's per-shard part and its shards mapped over the task runner;
finished work is skipped."""

from __future__ import annotations

from prefect import flow, unmapped
from prefect.runtime import flow_run

from pretrain_core.config import PipelineConfig, load_config
from pretrain_core.manifest import StageManifest
from pretrain_core.pipeline import CORPUS_STAGES, CorpusPipeline
from pretrain_core.root_lock import root_lock
from tasks.corpus import (
    fit_for_stage,
    plan_fit_maps,
    plan_fit_reduce,
    plan_stage,
    run_fit_map,
    run_fit_reduce_job,
    run_stage_shard,
    stage_status,
    write_stage_manifest,
)
from tasks.progress import artifact_key, results_with_progress
from tasks.runners import task_runner_for


@flow(name="corpus-rebuild-stages", log_prints=True)
def rebuild_stages(cfg: PipelineConfig) -> dict[str, StageManifest]:
    """Run the stages of an already-loaded config on the flow's task runner."""
    return {name: run_stage_on_runner(cfg, name) for name in CORPUS_STAGES}


def run_stage_on_runner(cfg: PipelineConfig, name: str) -> StageManifest:
    """One stage inside a flow: skipped when done; else its fit's per-shard part, the rounds of a partitioned
    reduce and then its shards mapped over the flow's task runner, the fit's last step and the manifest in between
    and after."""
    done = stage_status(cfg, name)
    if done is not None:
        return done
    fit_jobs = plan_fit_maps(cfg, name)
    if fit_jobs:  # the per-shard part of the stage's fit, on the same workers as the shards
        results_with_progress(
            run_fit_map.map(unmapped(cfg), unmapped(name), fit_jobs),
            artifact_key(cfg.name, name, "fit-progress"),
            f"{name}: fit shards done of {len(fit_jobs)}",
        )
    while reduce_jobs := plan_fit_reduce(cfg, name):  # a partitioned reduce's rounds, each mapped the same way
        results_with_progress(
            run_fit_reduce_job.map(unmapped(cfg), unmapped(name), reduce_jobs),
            artifact_key(cfg.name, name, "reduce-progress"),
            f"{name}: reduce round {reduce_jobs[0].round}, jobs done of {len(reduce_jobs)}",
        )
    artifacts = fit_for_stage(cfg, name)
    plan = plan_stage(cfg, name)
    futures = run_stage_shard.map(unmapped(cfg), unmapped(name), list(plan.jobs), unmapped(artifacts))
    records = results_with_progress(
        futures, artifact_key(cfg.name, name, "progress"), f"{name}: shards done of {len(plan.jobs)}"
    )
    return write_stage_manifest(cfg, plan, records, artifacts)


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
    """Run the stages with the task runner the config's execution section asks for, holding the output root for
    this config (a run of another config there is refused; see `pretrain_core.root_lock`)."""
    fingerprint = CorpusPipeline(cfg).fingerprint()
    with root_lock(cfg.storage.root, fingerprint, what=f"flow run {flow_run.get_name() or 'outside Prefect'}"):
        return rebuild_stages.with_options(task_runner=task_runner_for(cfg.execution))(cfg)
