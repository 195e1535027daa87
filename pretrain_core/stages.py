"""The one table of corpus stages. The pipeline, standalone runs, the CLI and the schema checks all read it.

A stage is a module plus one `StageSpec` line here. The module defines the stage's hooks:

- `settings_of(cfg) -> dict`: the config its outputs depend on (hashed into its marker, chained downstream);
- `build_stage(cfg, artifacts) -> TableStage`: the per-shard transform (every stage but ingest);
- `fit_stage(inputs, cfg, shared, artifact_dir) -> artifacts` (optional): global work before the shards run;
- `fit_map(input_url, cfg, shared, partial_url)` (optional, with `fit_stage`): the fit's per-shard part, run like the
  shards (workers, Dask) and resumable per shard; `fit_stage` then gets the partials, in input order, instead of the
  inputs;
- `fit_reduce(partials, cfg, shared, artifact_dir)` (optional, with `fit_map`, instead of `fit_stage`): a reduce run
  as rounds of jobs on the same workers (`dedup.partitioned.PartitionedReduce`: `next_jobs`, `run`, `seconds`,
  `finish`).

Shared fits (the tokenizer, the splits) are fitted once and handed to every stage that `uses` them. Modules are
imported only when a hook is called, so reading the table (for `--help`, say) costs nothing.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from types import ModuleType

import pyarrow as pa

from pretrain_core import schema


@dataclass(frozen=True)
class StageSpec:
    """One corpus stage: its hooks' module, its input and output contracts, and how its row counts behave."""

    name: str
    module: str
    input_schema: pa.Schema | None  # None: the stage reads the configured sources, not an earlier stage
    output_schema: pa.Schema
    help: str
    expands_rows: bool = False  # output rows need not be input rows minus quarantined ones
    uses: tuple[str, ...] = ()  # shared fits handed to this stage's fit and build

    @property
    def reads_sources(self) -> bool:
        return self.input_schema is None

    def hooks(self) -> ModuleType:
        return importlib.import_module(self.module)


@dataclass(frozen=True)
class SharedFit:
    """A model fitted once on one stage's outputs and shared by later stages (`settings_of`, `fit_shared`)."""

    name: str
    module: str
    reads: str  # the stage whose outputs it is fitted on

    def hooks(self) -> ModuleType:
        return importlib.import_module(self.module)


@dataclass(frozen=True)
class StageRegistry:
    """Stages in pipeline order, each reading the outputs of the one before it, and the shared fits."""

    stages: tuple[StageSpec, ...]
    shared_fits: tuple[SharedFit, ...]

    def __post_init__(self) -> None:
        names = [s.name for s in self.stages] + [f.name for f in self.shared_fits]
        if len(set(names)) != len(names):
            raise ValueError(f"stage and fit names must be unique: {names}")
        for before, after in zip(self.stages, self.stages[1:], strict=False):
            if after.input_schema is not None and not after.input_schema.equals(before.output_schema):
                raise ValueError(f"stage {after.name!r} reads another contract than {before.name!r} writes")
        for fit in self.shared_fits:
            if fit.reads not in {s.name for s in self.stages}:
                raise ValueError(f"shared fit {fit.name!r} reads unknown stage {fit.reads!r}")
        for spec in self.stages:
            unknown = set(spec.uses) - {f.name for f in self.shared_fits}
            if unknown:
                raise ValueError(f"stage {spec.name!r} uses unknown shared fits {sorted(unknown)}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.stages)

    def stage(self, name: str) -> StageSpec:
        for spec in self.stages:
            if spec.name == name:
                return spec
        raise ValueError(f"unknown stage {name!r}; choose from {', '.join(self.names)}")

    def shared_fit(self, name: str) -> SharedFit:
        for fit in self.shared_fits:
            if fit.name == name:
                return fit
        raise ValueError(f"unknown shared fit {name!r}; choose from {', '.join(f.name for f in self.shared_fits)}")

    def entry(self, name: str) -> StageSpec | SharedFit:
        """A stage or a shared fit, by name."""
        return self.shared_fit(name) if name in {f.name for f in self.shared_fits} else self.stage(name)

    def previous(self, name: str) -> str | None:
        """The stage whose outputs `name` (a stage or a shared fit) reads; None for a stage that reads sources."""
        entry = self.entry(name)
        if isinstance(entry, SharedFit):
            return entry.reads
        return None if entry.reads_sources else self.stages[self.names.index(name) - 1].name

    def hash_order(self) -> Iterator[str]:
        """Stages and shared fits in the order their config hashes chain: each fit just before its first user."""
        seen: set[str] = set()
        for spec in self.stages:
            for fit in spec.uses:
                if fit not in seen:
                    seen.add(fit)
                    yield fit
            yield spec.name

    def insert_after(self, name: str, spec: StageSpec) -> StageRegistry:
        """A registry with `spec` run right after stage `name` (e.g. a new filter), checked like the default."""
        index = self.names.index(self.stage(name).name) + 1
        return replace(self, stages=(*self.stages[:index], spec, *self.stages[index:]))


def _stages() -> Sequence[StageSpec]:
    return (
        StageSpec("ingest", "pretrain_core.ingest.stage", None, schema.INGEST,
                  "read JSONL, Parquet, text and code trees, WARC/WET into documents", expands_rows=True),
        StageSpec("clean", "pretrain_core.clean.stage", schema.INGEST, schema.CLEAN,
                  "fix text (ftfy), identify the language, drop what heuristic filters reject"),
        StageSpec("dedup", "pretrain_core.dedup.stage", schema.CLEAN, schema.DEDUP,
                  "drop exact and near duplicates (MinHash LSH or SimHash), keeping one per cluster"),
        StageSpec("pii", "pretrain_core.pii.stage", schema.DEDUP, schema.PII,
                  "redact emails, phones, cards, IDs, secrets, names, addresses; drop PII-dense documents"),
        StageSpec("quality", "pretrain_core.quality.stage", schema.PII, schema.QUALITY,
                  "score perplexity against reference text and keep the better buckets"),
        StageSpec("decontaminate", "pretrain_core.decontam.stage", schema.QUALITY, schema.QUALITY,
                  "drop or redact training documents sharing an n-gram with an evaluation set or the held-out split",
                  uses=("splits",)),
        StageSpec("mixture", "pretrain_core.mixture.stage", schema.QUALITY, schema.MIXTURE,
                  "repeat or sample documents so domains reach their share of tokens", expands_rows=True,
                  uses=("tokenizer", "splits")),
        StageSpec("tokenize", "pretrain_core.tokenize.stage", schema.MIXTURE, schema.TOKENS,
                  "encode with the SentencePiece model and pack into sequences per split", expands_rows=True,
                  uses=("tokenizer", "splits")),
    )  # fmt: skip


CORPUS = StageRegistry(
    stages=tuple(_stages()),
    shared_fits=(
        SharedFit("tokenizer", "pretrain_core.tokenize.train", reads="decontaminate"),
        SharedFit("splits", "pretrain_core.tokenize.splits", reads="quality"),
    ),
)
