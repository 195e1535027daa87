"""The corpus stages as one table: where each writes, what it reads, what it fits, how its shards run.

Both the command line (sequentially, in-process) and the Prefect flows (mapped over a task runner) drive the
same four calls per stage: `fit` (global work, cached by a marker), `plan` (one job per shard), `run_job`,
and `finalize` (the stage manifest, written last).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from pretrain_core import storage
from pretrain_core.clean.stage import CleanStage
from pretrain_core.config import PipelineConfig
from pretrain_core.dedup.stage import DedupStage, fit_dedup
from pretrain_core.ingest.stage import plan_ingest, run_ingest_shard
from pretrain_core.manifest import ShardRecord, StageManifest, config_hash
from pretrain_core.mixture.plan import fit_mixture
from pretrain_core.mixture.stage import MixtureStage
from pretrain_core.pii.classifier import model_sha256
from pretrain_core.pii.stage import PiiStage
from pretrain_core.quality.stage import QualityStage, fit_quality
from pretrain_core.stage import (
    ShardJob,
    TableStage,
    data_shards,
    finalize_stage,
    finished_stage,
    plan_shards,
    run_shard,
)
from pretrain_core.tokenize.splits import SPLIT_SETTINGS, fit_splits
from pretrain_core.tokenize.stage import TokenizeStage
from pretrain_core.tokenize.train import TOKENIZER_FILE, fit_tokenizer, tokenizer_sha256
from pretrain_core.train.config import TrainConfig

CORPUS_STAGES = ("ingest", "clean", "dedup", "pii", "quality", "mixture", "tokenize")


@dataclass(frozen=True)
class StagePlan:
    """A stage ready to run: its jobs, where it writes, and the hash that marks its outputs."""

    name: str
    output_root: str
    config_hash: str
    jobs: tuple[ShardJob, ...]
    started_at: float  # wall-clock time the plan was made, for the manifest's timing


def configure_storage(cfg: PipelineConfig) -> None:
    """Apply storage settings in this process (also called on every Dask worker before it touches data)."""
    if cfg.storage.endpoint_url:
        storage.set_storage_options("s3", client_kwargs={"endpoint_url": cfg.storage.endpoint_url})


class CorpusPipeline:
    """The corpus stages of one pipeline config. Cheap to build; picklable, so workers can rebuild stages."""

    def __init__(
        self,
        cfg: PipelineConfig,
        roots: dict[str, str] | None = None,
        inputs: dict[str, list[str]] | None = None,
    ) -> None:
        """`roots` and `inputs` override where a stage writes and what it reads (for standalone stage runs)."""
        self.cfg = cfg
        self._roots = roots or {}
        self._inputs = inputs or {}
        configure_storage(cfg)

    def root(self, name: str) -> str:
        return self._roots.get(name) or storage.join(self.cfg.storage.root, "corpus", name)

    def stage_config(self, name: str) -> dict[str, Any]:
        """The settings a stage's outputs depend on (its own plus those of models it fits)."""
        c = self.cfg
        sections: dict[str, dict[str, Any]] = {
            "ingest": {"sources": [s.model_dump(mode="json") for s in c.sources], "ingest": c.ingest},
            "clean": {"clean": c.clean},
            "dedup": {"dedup": c.dedup},
            "pii": {
                "pii": c.pii,
                "tagger_sha256": model_sha256(c.pii.classifier_model) if c.pii.uses_classifier() else None,
            },
            "quality": {"quality": c.quality},
            "tokenizer": {"tokenizer": c.tokenizer},
            "splits": {"pack": c.pack.model_dump(mode="json", include=set(SPLIT_SETTINGS))},
            # the plan counts the BOS/EOS the packer adds to every document
            "mixture": {"mixture": c.mixture, "pack": c.pack.model_dump(mode="json", include={"add_bos", "add_eos"})},
            "tokenize": {"pack": c.pack},
        }
        return {k: v.model_dump(mode="json") if isinstance(v, BaseModel) else v for k, v in sections[name].items()}

    def config_hash(self, name: str) -> str:
        """Each stage's hash chains its upstream's, so changing an early stage invalidates everything after it."""
        order = ("ingest", "clean", "dedup", "pii", "quality", "tokenizer", "splits", "mixture", "tokenize")
        upstream = ""
        for stage in order[: order.index(name) + 1]:
            upstream = config_hash(stage, self.stage_config(stage), upstream)
        return upstream

    def inputs(self, name: str) -> list[str]:
        if name in self._inputs:
            return self._inputs[name]
        previous = {
            "clean": "ingest",
            "dedup": "clean",
            "pii": "dedup",
            "quality": "pii",
            "tokenizer": "quality",
            "splits": "quality",
            "mixture": "quality",
            "tokenize": "mixture",
        }[name]
        shards = data_shards(self.root(previous))
        if not shards:
            raise RuntimeError(f"stage {name!r} has no input: run {previous!r} first ({self.root(previous)})")
        return shards

    def finished(self, name: str) -> StageManifest | None:
        return finished_stage(self.root(name), self.config_hash(name))

    # -- fit ---------------------------------------------------------------------------------------------------

    def fit(self, name: str) -> dict[str, str]:
        """Global work a stage needs before its shards run (clusters, models, plans); empty for map-only stages."""
        fitters: dict[str, Callable[[str], dict[str, str]]] = {
            "dedup": lambda d: fit_dedup(self.inputs("dedup"), self.cfg.dedup, d),
            "quality": lambda d: fit_quality(self.inputs("quality"), self.cfg.quality, d),
            "mixture": lambda d: {**self.fit_tokenizer(), **self.fit_splits(), **self._fit_mixture(d)},
            "tokenize": lambda d: {**self.fit_tokenizer(), **self.fit_splits()},
        }
        if name not in fitters:
            return {}
        return self._cached_fit(name, storage.join(self.root(name), "artifacts"), fitters[name])

    def fit_tokenizer(self) -> dict[str, str]:
        """The SentencePiece model, trained once on the quality stage's output and shared by mixture and tokenize."""
        return self._cached_fit(
            "tokenizer",
            self.root("tokenizer"),
            lambda d: fit_tokenizer(self.inputs("tokenizer"), self.cfg.tokenizer, d),
        )

    def fit_splits(self) -> dict[str, str]:
        """Train / validation / test per document of the quality stage's output, shared by mixture and tokenize:
        assigned before the mixture, so its plan can count training documents only."""
        return self._cached_fit(
            "splits", self.root("splits"), lambda d: fit_splits(self.inputs("splits"), self.cfg.pack, d)
        )

    def _fit_mixture(self, artifact_dir: str) -> dict[str, str]:
        return fit_mixture(
            self.inputs("mixture"),
            self.cfg.mixture,
            self.fit_tokenizer()["tokenizer"],
            self.fit_splits()["splits"],
            self.cfg.pack.frame_tokens,
            artifact_dir,
        )

    def _cached_fit(self, name: str, artifact_dir: str, fit: Callable[[str], dict[str, str]]) -> dict[str, str]:
        """Run `fit` unless `_fit.json` says it already ran under this config hash; the marker is written last."""
        marker = storage.join(artifact_dir, "_fit.json")
        hash_ = self.config_hash(name)
        if storage.exists(marker):
            done = storage.read_json(marker)
            if done["config_hash"] == hash_ and all(storage.exists(u) for u in done["artifacts"].values()):
                return dict(done["artifacts"])
        artifacts = fit(artifact_dir)
        storage.write_json(marker, {"config_hash": hash_, "artifacts": artifacts})
        return artifacts

    # -- shards ------------------------------------------------------------------------------------------------

    def plan(self, name: str) -> StagePlan:
        root, hash_ = self.root(name), self.config_hash(name)
        if name == "ingest":
            jobs = plan_ingest(list(self.cfg.sources), root, hash_, self.cfg.ingest)
        else:
            jobs = plan_shards(name, self.inputs(name), root, hash_)
        return StagePlan(name, root, hash_, tuple(jobs), time.time())

    def build(self, name: str, artifacts: dict[str, str]) -> TableStage:
        c = self.cfg
        builders: dict[str, Callable[[], TableStage]] = {
            "clean": lambda: CleanStage(c.clean),
            "dedup": lambda: DedupStage(c.dedup, artifacts),
            "pii": lambda: PiiStage(c.pii),
            "quality": lambda: QualityStage(c.quality, artifacts),
            "mixture": lambda: MixtureStage(c.mixture, artifacts),
            "tokenize": lambda: TokenizeStage(c.pack, artifacts),
        }
        return builders[name]()

    def run_job(self, name: str, job: ShardJob, artifacts: dict[str, str]) -> ShardRecord:
        if name == "ingest":
            source_name = job.key.rsplit("-", 1)[0]
            source = next(s for s in self.cfg.sources if s.name == source_name)
            return run_ingest_shard(job, source, self.cfg.ingest)
        return run_shard(job, self.build(name, artifacts))

    def finalize(self, plan: StagePlan, records: list[ShardRecord], artifacts: dict[str, str]) -> StageManifest:
        return finalize_stage(
            plan.name,
            plan.output_root,
            plan.config_hash,
            self.stage_config(plan.name),
            records,
            time.time() - plan.started_at,
            artifacts,
            {"tokenizer_sha256": tokenizer_sha256(artifacts)} if "tokenizer_card" in artifacts else None,
        )

    def run_stage(self, name: str, progress: Callable[[int, int], None] | None = None) -> StageManifest:
        """Run one stage here, in order, skipping finished shards (the CLI path)."""
        done = self.finished(name)
        if done is not None:
            return done
        artifacts = self.fit(name)
        plan = self.plan(name)
        records = []
        for index, job in enumerate(plan.jobs, start=1):
            records.append(self.run_job(name, job, artifacts))
            if progress:
                progress(index, len(plan.jobs))
        return self.finalize(plan, records, artifacts)


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
