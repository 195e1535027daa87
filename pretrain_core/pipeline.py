"""The corpus stages as one table: where each writes, what it reads, what it fits, how its shards run.

Both the command line (sequentially, in-process) and the Prefect flows (mapped over a task runner) drive the
same four calls per stage: `fit` (global work, cached by a marker), `plan` (one job per shard), `run_job`,
and `finalize` (the stage manifest, written last).
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from pretrain_core import storage
from pretrain_core.config import PipelineConfig
from pretrain_core.config_base import ConfigError
from pretrain_core.ingest.stage import plan_ingest, run_ingest_shard
from pretrain_core.manifest import ShardRecord, StageManifest, config_hash
from pretrain_core.stage import (
    ShardJob,
    TableStage,
    data_shards,
    finalize_stage,
    finished_stage,
    plan_shards,
    run_shard,
)
from pretrain_core.stages import CORPUS, StageRegistry
from pretrain_core.tokenize.train import TOKENIZER_FILE, tokenizer_sha256
from pretrain_core.train.config import TrainConfig

FIT_MARKER = "_fit.json"  # written last by a fit: its config hash, artifacts and seconds

CORPUS_STAGES = CORPUS.names


@dataclass(frozen=True)
class StagePlan:
    """A stage ready to run: its jobs, where it writes, and the hash that marks its outputs."""

    name: str
    output_root: str
    config_hash: str
    jobs: tuple[ShardJob, ...]
    started_at: float  # wall-clock time the plan was made, for the manifest's timing


_checked_roots: set[tuple[str, str | None]] = set()  # roots whose bucket this process has seen, checked once


def configure_storage(cfg: PipelineConfig) -> None:
    """Apply storage settings in this process (also called on every Dask worker before it touches data)."""
    if cfg.storage.endpoint_url:
        storage.set_storage_options("s3", client_kwargs={"endpoint_url": cfg.storage.endpoint_url})
    if (cfg.storage.root, cfg.storage.endpoint_url) not in _checked_roots:
        try:
            storage.ensure_bucket(cfg.storage.root, cfg.storage.create_bucket)
        except FileNotFoundError as exc:
            raise ConfigError(str(exc)) from None
        _checked_roots.add((cfg.storage.root, cfg.storage.endpoint_url))


class CorpusPipeline:
    """The corpus stages of one pipeline config. Cheap to build; picklable, so workers can rebuild stages."""

    def __init__(
        self,
        cfg: PipelineConfig,
        roots: dict[str, str] | None = None,
        inputs: dict[str, list[str]] | None = None,
        registry: StageRegistry = CORPUS,
    ) -> None:
        """`roots` and `inputs` override where a stage writes and what it reads (for standalone stage runs);
        `registry` is the stage table (the default corpus stages, or one with a stage added)."""
        self.cfg = cfg
        self.registry = registry
        self._roots = roots or {}
        self._inputs = inputs or {}
        configure_storage(cfg)

    def root(self, name: str) -> str:
        return self._roots.get(name) or storage.join(self.cfg.storage.root, "corpus", name)

    def stage_config(self, name: str) -> dict[str, Any]:
        """The settings a stage's (or shared fit's) outputs depend on, from its module's `settings_of`."""
        sections = self.registry.entry(name).hooks().settings_of(self.cfg)
        return {k: v.model_dump(mode="json") if isinstance(v, BaseModel) else v for k, v in sections.items()}

    def config_hash(self, name: str) -> str:
        """Each stage's hash chains its upstream's, so changing an early stage invalidates everything after it."""
        order = list(self.registry.hash_order())
        upstream = ""
        for stage in order[: order.index(name) + 1]:
            upstream = config_hash(stage, self.stage_config(stage), upstream)
        return upstream

    def fit_hash(self, name: str) -> str:
        """What a stage's own fit depends on: its upstream's hash and the settings its module's `fit_settings_of`
        names (all of its settings when it names none), so settings that only change how shards are scored with
        the fitted state (quality's thresholds, say) do not refit it."""
        order = list(self.registry.hash_order())
        upstream = self.config_hash(order[order.index(name) - 1]) if order.index(name) else ""
        narrower = getattr(self.registry.entry(name).hooks(), "fit_settings_of", None)
        if narrower is None:
            return self.config_hash(name)
        return config_hash(f"{name}:fit", narrower(self.cfg), upstream)

    def inputs(self, name: str) -> list[str]:
        if name in self._inputs:
            return self._inputs[name]
        previous = self.registry.previous(name)
        if previous is None:
            raise RuntimeError(f"stage {name!r} reads the configured sources, not shards")
        shards = data_shards(self.root(previous))
        if not shards:
            raise RuntimeError(f"stage {name!r} has no input: run {previous!r} first ({self.root(previous)})")
        return shards

    def finished(self, name: str) -> StageManifest | None:
        return finished_stage(self.root(name), self.config_hash(name))

    # -- fit ---------------------------------------------------------------------------------------------------

    def fit(self, name: str) -> dict[str, str]:
        """Global work a stage needs before its shards run (clusters, models, plans) and the shared fits it uses;
        empty for map-only stages."""
        spec = self.registry.stage(name)
        own = getattr(spec.hooks(), "fit_stage", None)
        shared = {key: url for fit_name in spec.uses for key, url in self.fit_shared(fit_name).items()}
        if own is None:
            return shared
        fitted = self._cached_fit(
            name,
            self._fit_dir(name),
            lambda artifact_dir: own(self.inputs(name), self.cfg, shared, artifact_dir),
            self.fit_hash(name),
        )
        return {**shared, **fitted}

    def fit_seconds(self, name: str) -> float:
        """Wall seconds the stage's fit and the shared fits it uses took when they ran (from their markers)."""
        spec = self.registry.stage(name)
        dirs = [self._fit_dir(name)] + [self.root(fit_name) for fit_name in spec.uses]
        markers = [storage.join(d, FIT_MARKER) for d in dirs]
        return sum(float(storage.read_json(m).get("seconds", 0.0)) for m in markers if storage.exists(m))

    def _fit_dir(self, name: str) -> str:
        return storage.join(self.root(name), "artifacts")

    def fit_shared(self, name: str) -> dict[str, str]:
        """A shared fit (the tokenizer, the splits), done once on its stage's outputs for every stage that uses it."""
        hooks = self.registry.shared_fit(name).hooks()
        return self._cached_fit(name, self.root(name), lambda d: hooks.fit_shared(self.inputs(name), self.cfg, d))

    def _cached_fit(
        self, name: str, artifact_dir: str, fit: Callable[[str], dict[str, str]], hash_: str | None = None
    ) -> dict[str, str]:
        """Run `fit` unless `_fit.json` says it already ran under this hash (the stage's config hash unless
        given); the marker, written last, records what it made and how long it took (manifests count that time)."""
        marker = storage.join(artifact_dir, FIT_MARKER)
        hash_ = hash_ or self.config_hash(name)
        if storage.exists(marker):
            done = storage.read_json(marker)
            if done["config_hash"] == hash_ and all(storage.exists(u) for u in done["artifacts"].values()):
                return dict(done["artifacts"])
        started = time.perf_counter()
        artifacts = fit(artifact_dir)
        seconds = round(time.perf_counter() - started, 3)
        storage.write_json(marker, {"config_hash": hash_, "artifacts": artifacts, "seconds": seconds})
        return artifacts

    # -- shards ------------------------------------------------------------------------------------------------

    def plan(self, name: str) -> StagePlan:
        root, hash_ = self.root(name), self.config_hash(name)
        if self.registry.stage(name).reads_sources:
            jobs = plan_ingest(list(self.cfg.sources), root, hash_, self.cfg.ingest)
        else:
            jobs = plan_shards(name, self.inputs(name), root, hash_)
        return StagePlan(name, root, hash_, tuple(jobs), time.time())

    def build(self, name: str, artifacts: dict[str, str]) -> TableStage:
        stage: TableStage = self.registry.stage(name).hooks().build_stage(self.cfg, artifacts)
        return stage

    def run_job(self, name: str, job: ShardJob, artifacts: dict[str, str]) -> ShardRecord:
        spec = self.registry.stage(name)
        if spec.reads_sources:
            source_name = job.key.rsplit("-", 1)[0]
            source = next(s for s in self.cfg.sources if s.name == source_name)
            return run_ingest_shard(job, source, self.cfg.ingest)
        return run_shard(job, self.build(name, artifacts), expands_rows=spec.expands_rows)

    def finalize(self, plan: StagePlan, records: list[ShardRecord], artifacts: dict[str, str]) -> StageManifest:
        return finalize_stage(
            plan.name,
            plan.output_root,
            plan.config_hash,
            self.stage_config(plan.name),
            records,
            time.time() - plan.started_at,
            self.fit_seconds(plan.name),
            artifacts,
            {"tokenizer_sha256": tokenizer_sha256(artifacts)} if "tokenizer_card" in artifacts else None,
        )

    def run_stage(self, name: str, progress: Callable[[int, int], None] | None = None) -> StageManifest:
        """Run one stage from here (the CLI path), skipping finished shards: the shards one after another, or in
        `execution.processes` worker processes (every core; threads would share one under the GIL)."""
        done = self.finished(name)
        if done is not None:
            return done
        artifacts = self.fit(name)
        plan = self.plan(name)
        records = self._run_jobs(name, plan.jobs, artifacts, progress)
        return self.finalize(plan, records, artifacts)

    def _run_jobs(
        self,
        name: str,
        jobs: Sequence[ShardJob],
        artifacts: dict[str, str],
        progress: Callable[[int, int], None] | None,
    ) -> list[ShardRecord]:
        """Records in job order; progress as each job ends."""
        workers = min(self.cfg.execution.processes, len(jobs))
        if workers < 2:
            records = []
            for index, job in enumerate(jobs, start=1):
                records.append(self.run_job(name, job, artifacts))
                if progress:
                    progress(index, len(jobs))
            return records
        # spawn, not fork: a forked worker would inherit this process's threads and open clients (Prefect, s3fs).
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = [pool.submit(self.run_job, name, job, artifacts) for job in jobs]
            for index, _ in enumerate(as_completed(futures), start=1):
                if progress:
                    progress(index, len(jobs))
            return [future.result() for future in futures]


def training_config(cfg: PipelineConfig) -> TrainConfig:
    """The training settings wired to this pipeline's token shards, tokenizer and storage root.

    Each corpus build trains into its own directory (keyed by the tokenize stage's hash), so a rebuilt corpus
    starts a new run while a killed run on the same corpus resumes from its newest checkpoint.
    """
    corpus_hash = CorpusPipeline(cfg).config_hash("tokenize")
    return cfg.train.model_copy(
        update={
            "tokens_url": storage.join(cfg.storage.root, "corpus", "tokenize"),
            "tokenizer_url": storage.join(cfg.storage.root, "corpus", "tokenizer", TOKENIZER_FILE),
            "output_url": storage.join(cfg.storage.root, "train", f"corpus-{corpus_hash}"),
            "seq_len": cfg.pack.seq_len,
        }
    )
