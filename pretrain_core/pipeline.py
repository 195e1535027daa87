"""The corpus stages as one table: where each writes, what it reads, what it fits, how its shards run.

Both the command line (sequentially, in-process) and the Prefect flows (mapped over a task runner) drive the
same four calls per stage: `fit` (global work, cached by a marker), `plan` (one job per shard), `run_job`,
and `finalize` (the stage manifest, written last).
"""

from __future__ import annotations

import functools
import multiprocessing
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel

from pretrain_core import storage
from pretrain_core.config import PipelineConfig
from pretrain_core.config_base import ConfigError
from pretrain_core.ingest.listing import sources_bytes
from pretrain_core.ingest.stage import plan_ingest, run_ingest_shard, source_of
from pretrain_core.manifest import ShardRecord, StageManifest, config_hash
from pretrain_core.stage import (
    ShardJob,
    TableStage,
    data_shards,
    finalize_stage,
    finished_stage,
    plan_shards,
    recorded_stage,
    run_shard,
)
from pretrain_core.stages import CORPUS, StageRegistry
from pretrain_core.tokenize.train import TOKENIZER_FILE, tokenizer_sha256
from pretrain_core.train.config import TrainConfig

FIT_MARKER = "_fit.json"  # written last by a fit: its config hash, artifacts and seconds

CORPUS_STAGES = CORPUS.names


J = TypeVar("J")
R = TypeVar("R")


@dataclass(frozen=True)
class FitMapJob:
    """One input shard's part of a stage's fit: where it reads and the partial it writes (its marker beside)."""

    input_url: str
    partial_url: str

    @property
    def key(self) -> str:
        """The input shard's name, for logs and task names."""
        return self.partial_url.rsplit("/", 1)[-1].removesuffix(".parquet")

    @property
    def marker_url(self) -> str:
        return self.partial_url + ".done.json"


@dataclass(frozen=True)
class StagePlan:
    """A stage ready to run: its jobs, where it writes, and the hash that marks its outputs."""

    name: str
    output_root: str
    config_hash: str
    jobs: tuple[ShardJob, ...]
    started_at: float  # wall-clock time the plan was made, for the manifest's timing


_checked_roots: set[tuple[str, str | None]] = set()  # roots whose bucket this process has seen, checked once


def configure_storage(cfg: PipelineConfig, roots: Iterable[str] = ()) -> None:
    """Apply storage settings in this process (also called on every Dask worker before it touches data), and
    refuse, once per process, a root (`storage.root` and any overriding ``roots``) that cannot be used."""
    if cfg.storage.endpoint_url:
        storage.set_storage_options("s3", client_kwargs={"endpoint_url": cfg.storage.endpoint_url})
    for root in (cfg.storage.root, *roots):
        if (root, cfg.storage.endpoint_url) not in _checked_roots:
            try:
                storage.check_root(root, cfg.storage.create_bucket)
            except storage.StorageUnavailable as exc:
                raise ConfigError(str(exc)) from None
            _checked_roots.add((root, cfg.storage.endpoint_url))


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
        self._pool: ProcessPoolExecutor | None = None  # open while `run_stage` runs jobs in worker processes
        self._hashes: dict[str, str] = {}  # config hashes worked out so far (the config is frozen)
        configure_storage(cfg, self._roots.values())

    def root(self, name: str) -> str:
        """Where a stage or shared fit writes: `<root>/corpus/<name>`, or with `storage.layout: by_config`
        `<root>/corpus/<name>-<first 16 of its config hash>`."""
        if name in self._roots:
            return self._roots[name]
        folder = name if self.cfg.storage.layout == "flat" else f"{name}-{self.config_hash(name)[:16]}"
        return storage.join(self.cfg.storage.root, "corpus", folder)

    def stage_config(self, name: str) -> dict[str, Any]:
        """The settings a stage's (or shared fit's) outputs depend on, from its module's `settings_of`."""
        sections = self.registry.entry(name).hooks().settings_of(self.cfg)
        return {k: v.model_dump(mode="json") if isinstance(v, BaseModel) else v for k, v in sections.items()}

    def fingerprint(self) -> str:
        """The hash of every stage's settings, chained: what the outputs under `storage.root` depend on (the
        output root's lock names it, so a run of another config is refused there)."""
        return self.config_hash(list(self.registry.hash_order())[-1])

    def config_hash(self, name: str) -> str:
        """Each stage's hash chains its upstream's, so changing an early stage invalidates everything after it."""
        if name not in self._hashes:
            order = list(self.registry.hash_order())
            upstream = ""
            for stage in order[: order.index(name) + 1]:
                upstream = config_hash(stage, self.stage_config(stage), upstream)
            self._hashes[name] = upstream
        return self._hashes[name]

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

    def recorded(self, name: str) -> StageManifest | None:
        """The stage's manifest under this config even when its outputs have gone (`stage.recorded_stage`)."""
        return recorded_stage(self.root(name), self.config_hash(name))

    # -- fit ---------------------------------------------------------------------------------------------------

    def fit(self, name: str) -> dict[str, str]:
        """Global work a stage needs before its shards run (clusters, models, plans) and the shared fits it uses;
        empty for map-only stages. A stage whose fit has a per-shard part (`fit_map`) gets the partials of every
        input shard, and one whose reduce is rounds of jobs (`fit_reduce`) gets them run: what is not yet made is
        made here first, on the worker pool when one is open (a flow maps them over its workers before this call).
        """
        hooks = self.registry.stage(name).hooks()
        own = getattr(hooks, "fit_stage", None)
        shared = self._shared_of(name)
        if own is None and not hasattr(hooks, "fit_reduce"):
            return shared
        if not self._fit_done(name):
            self._run_jobs(self.fit_map_jobs(name), functools.partial(self.run_fit_map, name))
            while jobs := self.fit_reduce_jobs(name):
                self._run_jobs(jobs, functools.partial(self.run_fit_reduce_job, name))

        def fit(artifact_dir: str) -> dict[str, str]:
            reduce = self._reduce(name)
            if reduce is not None:
                return dict(reduce.finish(self.inputs(name)))
            assert own is not None  # a stage with neither returned above
            if getattr(hooks, "fit_map", None) is None:
                return dict(own(self.inputs(name), self.cfg, shared, artifact_dir))
            return dict(own([job.partial_url for job in self._fit_map_plan(name)], self.cfg, shared, artifact_dir))

        fitted_before = self._fit_done(name)
        fitted = self._cached_fit(name, self._fit_dir(name), fit, self.fit_hash(name), self._fit_job_seconds)
        reduce = None if fitted_before else self._reduce(name)
        if reduce is not None:  # recorded just now, its time included: its scratch can go
            reduce.discard_intermediates()
        return {**shared, **fitted}

    def fit_map_jobs(self, name: str) -> list[FitMapJob]:
        """The per-shard parts of a stage's fit still to make: none when the stage has no `fit_map` or its fit
        already ran under this hash, else one per input shard without a finished partial."""
        if getattr(self.registry.stage(name).hooks(), "fit_map", None) is None or self._fit_done(name):
            return []
        self._shared_of(name)  # the shared fits the map needs (the tokenizer), done here, never on the workers
        return [job for job in self._fit_map_plan(name) if not storage.exists(job.marker_url)]

    def run_fit_map(self, name: str, job: FitMapJob) -> None:
        """One shard's part of a stage's fit (runs on any worker); its marker, written last, records the time."""
        started = time.perf_counter()
        shared = self._shared_of(name)  # fitted before the maps were planned: their markers are read
        self.registry.stage(name).hooks().fit_map(job.input_url, self.cfg, shared, job.partial_url)
        storage.write_json(job.marker_url, {"seconds": round(time.perf_counter() - started, 3)})

    def fit_reduce_jobs(self, name: str) -> list[Any]:
        """The jobs of the next round of a stage's partitioned reduce still to run (every partial must exist);
        [] when the stage has none, its fit is done or every round is."""
        reduce = self._reduce(name)
        if reduce is None or self._fit_done(name):
            return []
        return list(reduce.next_jobs())

    def run_fit_reduce_job(self, name: str, job: Any) -> None:
        """One job of a stage's partitioned reduce (runs on any worker; its marker records its time)."""
        reduce = self._reduce(name)
        assert reduce is not None, f"stage {name!r} has no partitioned reduce"
        reduce.run(job)

    def _reduce(self, name: str) -> Any:
        """The stage's partitioned reduce over its partials, working under a directory keyed by the fit's hash
        (so a changed config never reads another's job markers); None for other stages."""
        make = getattr(self.registry.stage(name).hooks(), "fit_reduce", None)
        if make is None:
            return None
        partials = [job.partial_url for job in self._fit_map_plan(name)]
        work_dir = storage.join(self._fit_dir(name), "fits", self.fit_hash(name))
        return make(partials, self.cfg, self._shared_of(name), work_dir)

    def _shared_of(self, name: str) -> dict[str, str]:
        """The artifacts of the shared fits a stage uses (fitted first if they are not yet)."""
        uses = self.registry.stage(name).uses
        return {key: url for fit_name in uses for key, url in self.fit_shared(fit_name).items()}

    def _fit_map_plan(self, name: str) -> list[FitMapJob]:
        """One partial per input shard, in input order, under a directory keyed by the fit's hash."""
        partials = storage.join(self._fit_dir(name), "partials", self.fit_hash(name))
        return [FitMapJob(url, storage.join(partials, url.rstrip("/").rsplit("/", 1)[-1])) for url in self.inputs(name)]

    def _fit_job_seconds(self, name: str) -> float:
        """Seconds the per-shard parts and the reduce jobs of a stage's fit took, wherever they ran."""
        if getattr(self.registry.entry(name).hooks(), "fit_map", None) is None:
            return 0.0
        markers = [job.marker_url for job in self._fit_map_plan(name)]
        reduce = self._reduce(name)
        seconds = reduce.seconds() if reduce is not None else 0.0
        return seconds + sum(float(storage.read_json(m)["seconds"]) for m in markers if storage.exists(m))

    def _fit_done(self, name: str) -> bool:
        return _finished_fit(self._fit_dir(name), self.fit_hash(name)) is not None

    def fit_seconds(self, name: str) -> float:
        """Wall seconds the stage's fit and the shared fits it uses took when they ran (from their markers)."""
        spec = self.registry.stage(name)
        dirs = [self._fit_dir(name)] + [self.root(fit_name) for fit_name in spec.uses]
        markers = [storage.join(d, FIT_MARKER) for d in dirs]
        return sum(float(storage.read_json(m).get("seconds", 0.0)) for m in markers if storage.exists(m))

    def _fit_dir(self, name: str) -> str:
        """A stage's fitted state: beside its shards, or with `storage.layout: by_config` in a folder keyed by
        the fit's own hash, so configs that differ only in how shards use the fit (quality's cut-offs) share it."""
        if self.cfg.storage.layout == "flat" or name in self._roots:
            return storage.join(self.root(name), "artifacts")
        return storage.join(self.cfg.storage.root, "corpus", f"{name}-fit-{self.fit_hash(name)[:16]}")

    def fit_shared(self, name: str) -> dict[str, str]:
        """A shared fit (the tokenizer, the splits), done once on its stage's outputs for every stage that uses it."""
        hooks = self.registry.shared_fit(name).hooks()
        return self._cached_fit(name, self.root(name), lambda d: hooks.fit_shared(self.inputs(name), self.cfg, d))

    def _cached_fit(
        self,
        name: str,
        artifact_dir: str,
        fit: Callable[[str], dict[str, str]],
        hash_: str | None = None,
        map_seconds: Callable[[str], float] | None = None,
    ) -> dict[str, str]:
        """Run `fit` unless `_fit.json` says it already ran under this hash (the stage's config hash unless
        given); the marker, written last, records what it made and how long it took, its per-shard parts
        included (manifests count that time)."""
        hash_ = hash_ or self.config_hash(name)
        done = _finished_fit(artifact_dir, hash_)
        if done is not None:
            return done
        started = time.perf_counter()
        artifacts = fit(artifact_dir)
        seconds = round(time.perf_counter() - started + (map_seconds(name) if map_seconds else 0.0), 3)
        digests = {key: storage.sha256(url) for key, url in artifacts.items()}
        relative = {key: storage.relative_to(url, artifact_dir) for key, url in artifacts.items()}
        marker = {"config_hash": hash_, "artifacts": relative, "sha256": digests, "seconds": seconds}
        storage.write_json(storage.join(artifact_dir, FIT_MARKER), marker)
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
            return run_ingest_shard(job, source_of(job, list(self.cfg.sources)), self.cfg.ingest)
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
        """Run one stage from here (the CLI path), skipping finished work: the fit's per-shard part and the shards
        one after another, or in `execution.processes` worker processes (every core; threads would share one
        under the GIL), started once for both."""
        done = self.finished(name)
        if done is not None:
            return done
        with self._worker_pool():
            artifacts = self.fit(name)
            plan = self.plan(name)
            records = self._run_jobs(plan.jobs, functools.partial(self.run_job, name, artifacts=artifacts), progress)
        return self.finalize(plan, records, artifacts)

    @contextmanager
    def _worker_pool(self) -> Iterator[None]:
        """`execution.processes` spawned workers for the jobs run inside (none for fewer than two)."""
        processes = self.worker_processes
        if processes < 2:
            yield
            return
        # spawn, not fork: a forked worker would inherit this process's threads and open clients (Prefect, s3fs).
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=processes, mp_context=context) as pool:
            self._pool = pool
            try:
                yield
            finally:
                self._pool = None

    @functools.cached_property
    def worker_processes(self) -> int:
        """How many worker processes `run_stage` uses: `execution.processes`, with auto sized by this machine's
        cores and the bytes of the sources (or of the inputs a standalone run was given)."""
        return self.cfg.execution.worker_processes(self._input_bytes)

    def _input_bytes(self) -> int:
        if self._inputs:
            return sum(storage.size(url) for url in {url for urls in self._inputs.values() for url in urls})
        return sources_bytes(self.cfg.sources)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_pool": None}  # workers get the pipeline, not the pool

    def _run_jobs(
        self, jobs: Sequence[J], run: Callable[[J], R], progress: Callable[[int, int], None] | None = None
    ) -> list[R]:
        """`run(job)` for every job, results in job order, progress as each ends: on the worker pool when one is
        open (`run` must pickle: a bound method of this pipeline), else here one after another."""
        if self._pool is None or len(jobs) < 2:
            results = []
            for index, job in enumerate(jobs, start=1):
                results.append(run(job))
                if progress:
                    progress(index, len(jobs))
            return results
        futures = [self._pool.submit(run, job) for job in jobs]
        for index, _ in enumerate(as_completed(futures), start=1):
            if progress:
                progress(index, len(jobs))
        return [future.result() for future in futures]


class ArtifactChanged(ConfigError):
    """A fit's artifact no longer has the bytes its marker recorded: replaced, planted or damaged since."""


def _finished_fit(artifact_dir: str, hash_: str) -> dict[str, str] | None:
    """The artifacts of the fit whose marker in `artifact_dir` says it ran under `hash_` (all still there, each
    with the sha256 the marker recorded: a changed one is refused, never used)."""
    marker = storage.join(artifact_dir, FIT_MARKER)
    if not storage.exists(marker):
        return None
    done = storage.read_json(marker)
    artifacts = {key: storage.resolved(url, artifact_dir) for key, url in done["artifacts"].items()}
    if done["config_hash"] != hash_ or "sha256" not in done or not all(storage.exists(u) for u in artifacts.values()):
        return None  # another config's fit, one from before digests were recorded, or a lost artifact: refit
    for key, url in artifacts.items():
        if (found := storage.sha256(url)) != done["sha256"][key]:
            raise ArtifactChanged(
                f"{url} changed since its fit recorded it (sha256 {done['sha256'][key][:12]}… now {found[:12]}…): "
                f"refusing to use it; delete {marker} to fit again"
            )
    return dict(artifacts)


def training_config(cfg: PipelineConfig) -> TrainConfig:
    """The training settings wired to this pipeline's token shards, tokenizer and storage root.

    Each corpus build trains into its own directory (keyed by the tokenize stage's hash), so a rebuilt corpus
    starts a new run while a killed run on the same corpus resumes from its newest checkpoint.
    """
    pipeline = CorpusPipeline(cfg)
    corpus_hash = pipeline.config_hash("tokenize")
    return cfg.train.updated(
        tokens_url=pipeline.root("tokenize"),
        tokenizer_url=storage.join(pipeline.root("tokenizer"), TOKENIZER_FILE),
        output_url=storage.join(cfg.storage.root, "train", f"corpus-{corpus_hash}"),
        seq_len=cfg.pack.seq_len,
    )


def resolve_processes(cfg: PipelineConfig) -> PipelineConfig:
    """`cfg` with `execution.processes` a number (auto worked out as `CorpusPipeline.worker_processes` does): what
    a flow sizes its task runner by before any task runs."""
    processes = CorpusPipeline(cfg).worker_processes
    return cfg.model_copy(update={"execution": cfg.execution.model_copy(update={"processes": processes})})
