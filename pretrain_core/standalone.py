"""Run one corpus stage by itself on JSONL or Parquet files, outside the full pipeline.

Inputs that already carry the stage's input contract are used as they are. Anything else (plain JSONL or
Parquet with a text column) is ingested first and brought up to the contract with neutral values for the
columns that earlier stages would have filled (`lang` = "und", each document its own dedup cluster, ...).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pretrain_core import schema, storage
from pretrain_core.config import PipelineConfig
from pretrain_core.config_base import ConfigError
from pretrain_core.ingest.config import SourceConfig
from pretrain_core.ingest.languages import language_of
from pretrain_core.ingest.listing import is_glob, list_source_files
from pretrain_core.ingest.sniff import content_format
from pretrain_core.licences import NOASSERTION
from pretrain_core.manifest import StageManifest
from pretrain_core.pipeline import CorpusPipeline, configure_storage
from pretrain_core.root_lock import root_lock
from pretrain_core.stages import CORPUS, StageRegistry

_NEUTRAL: dict[str, Any] = {
    "licence": NOASSERTION,
    "lang": "und",
    "lang_score": 0.0,
    "dup_cluster_size": 1,
    "pii_count": 0,
    "pii_types": [],
    "perplexity": 0.0,
    "quality_classifier": 0.0,
    "quality_score": 0.0,
    "quality_bucket": "unscored",
    "n_tokens": 0,
    "repeat_index": 0,
}


def conform(table: pa.Table, target: pa.Schema) -> pa.Table:
    """Add the target's missing columns with neutral values and order columns as the contract says."""
    columns = []
    for field in target:
        if field.name in table.schema.names:
            columns.append(table.column(field.name).cast(field.type))
        elif field.name == "dup_cluster":
            columns.append(table.column("id"))
        elif field.name in _NEUTRAL:
            columns.append(pa.array([_NEUTRAL[field.name]] * table.num_rows, type=field.type))
        elif field.nullable:
            columns.append(pa.nulls(table.num_rows, type=field.type))
        else:
            raise schema.SchemaError(f"input lacks required column {field.name!r} and it has no neutral value")
    return pa.Table.from_arrays(columns, schema=target)


# Columns only our ingestion writes (raw datasets often have `id` and `text`, seldom these): an input holding most of
# them is meant as a stage's shard, and one that lacks the rest is refused rather than re-ingested as raw text.
_PIPELINE_COLUMNS = frozenset(schema.INGEST.names) - {"id", "text"}


def _is_ingested(url: str) -> bool:
    """A Parquet shard written by our ingestion (or any later stage), as opposed to a raw Parquet file; a file
    with most of the contract's own columns but not all is refused, naming what it lacks."""
    if not url.endswith(".parquet"):
        return False
    fs, path = storage.filesystem(url)
    with fs.open(path, "rb") as handle:
        names = set(pq.read_schema(handle).names)
    missing = [name for name in schema.INGEST.names if name not in names]
    if missing and 2 * len(_PIPELINE_COLUMNS & names) > len(_PIPELINE_COLUMNS):
        raise ConfigError(
            f"{url} has the contract's columns {sorted(_PIPELINE_COLUMNS & names)} but lacks {missing}: a stage's "
            "shard needs every column of docs/schema.md (a raw table needs none of them, only a text column)"
        )
    return not missing


_TEXT_SUFFIXES = (".txt", ".text", ".md", ".rst")


def input_format(url: str, domain: str = "general") -> str:
    """How to read an input: from the file's first bytes when they say (`ingest.sniff`: jsonl, parquet, warc or
    wet), so a WARC is never read as JSONL. A directory or glob is read as its first file says, or else as a tree
    of files, one document each (`code` with the code domain, `text` otherwise). A file whose bytes say nothing
    certain goes by its name: Parquet, a plain-text file (`text`: .txt, .md, .rst), a source file of a known
    language (`code`), else the JSONL reader, which quarantines what does not parse."""
    sniffed = content_format(url)
    if sniffed is not None:
        return sniffed
    fs, path = storage.filesystem(url)
    if fs.isdir(path) or is_glob(path):
        listed = list_source_files(SourceConfig(name="input", domain="general", format="text", path=url))
        return content_format(listed[0].url) or ("code" if domain == "code" else "text")
    name = path.rsplit("/", 1)[-1]
    if name.endswith(".parquet"):
        return "parquet"
    if name.lower().endswith(_TEXT_SUFFIXES):
        return "text"
    return "code" if language_of(name, {}) is not None else "jsonl"


@dataclass(frozen=True)
class RawInputs:
    """How to read input files that are not yet ingested: their documents' domain and the record fields that
    hold each document's text and, for code, its file path (which gives its language)."""

    domain: str = "general"
    text_field: str = "text"
    path_field: str | None = None

    def source(self, url: str, index: int) -> SourceConfig:
        fields = {"text_field": self.text_field, "path_field": self.path_field}
        return SourceConfig.model_validate(
            {"name": f"input_{index}", "domain": self.domain, "format": input_format(url, self.domain), "path": url}
            | fields
        )


@dataclass(frozen=True)
class PreparedInputs:
    shards: list[str]  # conformed to the stage's input contract, under <output>/_input
    ingest: StageManifest | None  # what ingesting the raw files kept and quarantined; None when none was raw


def prepare_inputs(
    cfg: PipelineConfig, target: pa.Schema, input_urls: list[str], output: str, raw_inputs: RawInputs
) -> PreparedInputs:
    """Shards that satisfy the `target` input contract, ingesting and conforming raw files under `<output>/_input`."""
    raw = [u for u in input_urls if not _is_ingested(u)]
    ready = [u for u in input_urls if u not in raw]
    ingested = None
    if raw:
        sources = [raw_inputs.source(u, i) for i, u in enumerate(raw)]
        ingest_cfg = cfg.model_copy(update={"sources": sources})
        ingested = CorpusPipeline(ingest_cfg, roots={"ingest": storage.join(output, "_ingest")}).run_stage("ingest")
        ready += [u for u in ingested.outputs if "/data/" in u]
    prepared = []
    for url in sorted(ready):
        name = url.rstrip("/").rsplit("/", 1)[-1]
        target_url = storage.join(output, "_input", name)
        storage.write_parquet(target_url, conform(storage.read_parquet(url), target))
        prepared.append(target_url)
    return PreparedInputs(prepared, ingested)


def run_standalone(
    cfg: PipelineConfig,
    stage: str,
    input_urls: list[str],
    output: str,
    raw_inputs: RawInputs = RawInputs(),
    progress: Callable[[int, int], None] | None = None,
    registry: StageRegistry = CORPUS,
) -> dict[str, StageManifest]:
    """Run `stage` on `input_urls`, writing its data, quarantine, artifacts and manifest under `output`; the shared
    fits it uses (tokenizer, splits) are fitted on the same inputs, under `output` too. Returns the manifest of
    every stage run, in order: "ingest" first when raw files were ingested for a later stage (what it
    quarantined never reaches the stage, so its counts belong beside the stage's), then the stage's."""
    configure_storage(cfg, [output])  # a root that cannot be used is refused before the lock is written there
    fingerprint = hashlib.sha256(json.dumps([stage, sorted(input_urls), cfg.hash()]).encode()).hexdigest()[:16]
    with root_lock(output, fingerprint, what=f"pretrain stage {stage}"):
        return _run_standalone(cfg, stage, input_urls, output, raw_inputs, progress, registry)


def _run_standalone(
    cfg: PipelineConfig,
    stage: str,
    input_urls: list[str],
    output: str,
    raw_inputs: RawInputs,
    progress: Callable[[int, int], None] | None,
    registry: StageRegistry,
) -> dict[str, StageManifest]:
    spec = registry.stage(stage)
    if spec.input_schema is None:  # reads_sources, spelt so the type checker narrows input_schema below
        sources = [raw_inputs.source(u, i) for i, u in enumerate(input_urls)]
        pipeline = CorpusPipeline(cfg.model_copy(update={"sources": sources}), roots={stage: output}, registry=registry)
        return {stage: pipeline.run_stage(stage, progress)}
    prepared = prepare_inputs(cfg, spec.input_schema, input_urls, output, raw_inputs)
    pipeline = CorpusPipeline(
        cfg,
        roots={stage: output, **{fit: storage.join(output, fit) for fit in spec.uses}},
        inputs={stage: prepared.shards, **{fit: prepared.shards for fit in spec.uses}},
        registry=registry,
    )
    ran = {"ingest": prepared.ingest} if prepared.ingest is not None else {}
    return {**ran, stage: pipeline.run_stage(stage, progress)}
