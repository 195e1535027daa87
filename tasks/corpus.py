"""Tasks for the corpus stages. Our own completion markers make reruns idempotent, so Prefect caching is off.
Mapped work runs as groups of jobs, a task each (`pretrain_core.job_groups`)."""

from __future__ import annotations

from typing import Any

from prefect import get_run_logger, task
from prefect.artifacts import create_table_artifact
from prefect.cache_policies import NO_CACHE

from pretrain_core.card.stats import is_card_statistic
from pretrain_core.config import PipelineConfig
from pretrain_core.job_groups import JobGroup
from pretrain_core.manifest import ShardRecord, StageManifest
from pretrain_core.pipeline import CorpusPipeline, FitMapJob, StagePlan
from pretrain_core.stage import ShardJob
from tasks.progress import artifact_key


@task(cache_policy=NO_CACHE, task_run_name="status-{name}")
def stage_status(cfg: PipelineConfig, name: str) -> StageManifest | None:
    """The stage's manifest when it already finished under this config (the rerun does no work)."""
    done = CorpusPipeline(cfg).finished(name)
    if done is not None:
        get_run_logger().info("%s: already done under config %s, skipping", name, done.config_hash)
    return done


@task(cache_policy=NO_CACHE, task_run_name="plan-fit-{name}")
def plan_fit_maps(cfg: PipelineConfig, name: str) -> list[FitMapJob]:
    """The per-shard parts of the stage's fit still to make (none for most stages, or when the fit is done)."""
    jobs = CorpusPipeline(cfg).fit_map_jobs(name)
    if jobs:
        get_run_logger().info("%s: fitting over %d shards first", name, len(jobs))
    return jobs


@task(cache_policy=NO_CACHE, task_run_name="fit-{name}-{group.label}")
def run_fit_maps(cfg: PipelineConfig, name: str, group: JobGroup[FitMapJob]) -> None:
    pipeline = CorpusPipeline(cfg)
    for job in group.jobs:
        pipeline.run_fit_map(name, job)


@task(cache_policy=NO_CACHE, task_run_name="plan-reduce-{name}")
def plan_fit_reduce(cfg: PipelineConfig, name: str) -> list[Any]:
    """The next round of the stage's partitioned reduce (dedup's), or [] when there is none left."""
    jobs = CorpusPipeline(cfg).fit_reduce_jobs(name)
    if jobs:
        get_run_logger().info("%s: reduce round %s, %d jobs", name, jobs[0].round, len(jobs))
    return jobs


@task(cache_policy=NO_CACHE, task_run_name="reduce-{name}-{group.label}")
def run_fit_reduce_jobs(cfg: PipelineConfig, name: str, group: JobGroup[Any]) -> None:
    pipeline = CorpusPipeline(cfg)
    for job in group.jobs:
        pipeline.run_fit_reduce_job(name, job)


@task(cache_policy=NO_CACHE, task_run_name="fit-{name}")
def fit_for_stage(cfg: PipelineConfig, name: str) -> dict[str, str]:
    return CorpusPipeline(cfg).fit(name)


@task(cache_policy=NO_CACHE, task_run_name="plan-{name}")
def plan_stage(cfg: PipelineConfig, name: str) -> StagePlan:
    plan = CorpusPipeline(cfg).plan(name)
    get_run_logger().info("%s: %d shards -> %s", name, len(plan.jobs), plan.output_root)
    return plan


@task(cache_policy=NO_CACHE, task_run_name="{name}-{group.label}")
def run_stage_shards(
    cfg: PipelineConfig, name: str, group: JobGroup[ShardJob], artifacts: dict[str, str]
) -> list[ShardRecord]:
    """The group's shards in turn, a log line for each as it ends (the task's log in the UI shows its progress)."""
    pipeline, logger, records = CorpusPipeline(cfg), get_run_logger(), []
    for done, job in enumerate(group.jobs, start=1):
        record = pipeline.run_job(name, job, artifacts)
        logger.info(
            "%s: shard %s done, %d documents in, %d out, %.1f s (%d of %d in this task)",
            name, job.key, record.docs_in, record.docs_out, record.seconds, done, len(group.jobs),
        )  # fmt: skip
        records.append(record)
    return records


@task(cache_policy=NO_CACHE, task_run_name="finalize-{plan.name}")
def write_stage_manifest(
    cfg: PipelineConfig, plan: StagePlan, records: list[ShardRecord], artifacts: dict[str, str]
) -> StageManifest:
    """Write the stage manifest and show its counts as a table in the UI, its stats (what a detector found, and
    what it could not run on) beneath."""
    manifest = CorpusPipeline(cfg).finalize(plan, records, artifacts)
    stats = stats_line(manifest)
    create_table_artifact(
        key=artifact_key(cfg.name, plan.name, "counts"),
        table=stage_table(manifest),
        description=f"**{plan.name}**: {manifest.docs_in} in, {manifest.docs_out} out, config {manifest.config_hash}; "
        f"outputs `{plan.output_root}/data`, dropped documents `{plan.output_root}/dropped`, "
        f"manifest `{plan.output_root}/manifest.json`\n\nstats: {stats}",
    )
    get_run_logger().info(
        "%s: %d in, %d out, dropped %s; stats: %s",
        plan.name,
        manifest.docs_in,
        manifest.docs_out,
        manifest.dropped,
        stats,
    )
    return manifest


def stats_line(manifest: StageManifest) -> str:
    """The manifest's stats as `name=value` pairs in name order, whole numbers without a decimal point; the data
    card's histograms (`family/value` keys) are counted, not listed: the card draws them."""
    headline = {k: v for k, v in manifest.stats.items() if not is_card_statistic(k)}
    values = [f"{k}={int(v) if float(v).is_integer() else round(v, 4)}" for k, v in sorted(headline.items())]
    if len(headline) < len(manifest.stats):
        values.append(f"{len(manifest.stats) - len(headline)} data-card counts")
    return ", ".join(values) or "none"


def stage_table(manifest: StageManifest) -> list[dict[str, object]]:
    """Per-shard rows plus a total row: counts in/out and drops by reason."""
    reasons = sorted(manifest.dropped)
    rows: list[dict[str, object]] = []
    for shard in manifest.shards:
        row: dict[str, object] = {"shard": shard.key, "in": shard.docs_in, "out": shard.docs_out}
        row.update({f"dropped:{r}": shard.dropped.get(r, 0) for r in reasons})
        rows.append(row)
    total: dict[str, object] = {"shard": "TOTAL", "in": manifest.docs_in, "out": manifest.docs_out}
    total.update({f"dropped:{r}": manifest.dropped[r] for r in reasons})
    rows.append(total)
    return rows
