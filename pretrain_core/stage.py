"""Sharded stage execution with per-shard completion records: the mechanism behind idempotent, resumable reruns.

A stage maps each input shard to one output shard (`data/<key>.parquet`) and one quarantine shard
(`dropped/<key>.parquet`, every dropped document with its reason), then writes `_shards/<key>.json` last.
A rerun skips every shard whose record exists under the same config hash; the stage's `manifest.json`,
written after all shards, marks the whole stage done. Where the work runs (a loop, Dask, Ray) is the
caller's business: jobs are plain data and `run_shard` is a plain function.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import pyarrow as pa

from pretrain_core import schema as contract
from pretrain_core import storage
from pretrain_core.manifest import ShardRecord, StageManifest, aggregate, read_manifest, write_manifest


class LostDocumentsError(RuntimeError):
    """A stage returned fewer documents (kept + dropped) than it was given: a silent loss, refused."""


@dataclass(frozen=True)
class ShardOutput:
    """What a stage made of one shard: kept documents, dropped ones (with `drop_reason`), and stage stats."""

    kept: pa.Table
    dropped: pa.Table
    stats: dict[str, float] = field(default_factory=dict)


class TableStage(Protocol):
    """A per-shard document transform; `schema` is the contract its kept output must meet."""

    name: str
    schema: pa.Schema

    def process(self, table: pa.Table) -> ShardOutput: ...


@dataclass(frozen=True)
class ShardJob:
    """One unit of work, small and picklable so any executor can run it."""

    stage: str
    key: str
    inputs: tuple[str, ...]
    output_root: str
    config_hash: str

    @property
    def data_url(self) -> str:
        return storage.join(self.output_root, "data", f"{self.key}.parquet")

    @property
    def dropped_url(self) -> str:
        return storage.join(self.output_root, "dropped", f"{self.key}.parquet")

    @property
    def record_url(self) -> str:
        return storage.join(self.output_root, "_shards", f"{self.key}.json")


def manifest_url(output_root: str) -> str:
    return storage.join(output_root, "manifest.json")


def shard_key(url: str) -> str:
    """Shard key from an input URL: its file name without the suffix."""
    name = url.rstrip("/").rsplit("/", 1)[-1]
    return name.split(".", 1)[0]


def plan_shards(stage: str, input_urls: list[str], output_root: str, config_hash: str) -> list[ShardJob]:
    """One job per input shard, keyed by the input's file name so outputs line up across stages."""
    keys = [shard_key(url) for url in input_urls]
    if len(set(keys)) != len(keys):
        raise ValueError(f"{stage}: input shards have clashing names: {sorted(keys)}")
    return [ShardJob(stage, key, (url,), output_root, config_hash) for key, url in zip(keys, input_urls, strict=True)]


def finished_record(job: ShardJob) -> ShardRecord | None:
    """The shard's record if it finished under the same config and its outputs are still there."""
    if not storage.exists(job.record_url):
        return None
    record = ShardRecord.model_validate(storage.read_json(job.record_url)).resolved(job.output_root)
    if record.config_hash != job.config_hash or not all(storage.exists(url) for url in record.outputs):
        return None
    return record


def commit_shard(
    job: ShardJob,
    output: ShardOutput,
    schema: pa.Schema,
    docs_in: int,
    bytes_in: int,
    started: float,
    expands_rows: bool = False,
) -> ShardRecord:
    """Validate against the contract, write data and quarantine atomically, then the record last. Unless the
    stage `expands_rows` (ingest finds records in files, the mixture repeats documents, tokenization packs them),
    every document in must come out kept or dropped."""
    kept = contract.validate(output.kept, schema, f"{job.stage}/{job.key}")
    dropped = contract.validate(output.dropped, contract.dropped_schema(schema), f"{job.stage}/{job.key} dropped")
    if docs_in != kept.num_rows + dropped.num_rows and not expands_rows:
        raise LostDocumentsError(
            f"{job.stage}/{job.key}: {docs_in} documents in but {kept.num_rows} kept + {dropped.num_rows} dropped"
        )
    storage.write_parquet(job.data_url, kept)
    storage.write_parquet(job.dropped_url, dropped)
    reasons: dict[str, int] = {}
    for reason in dropped.column("drop_reason").to_pylist():
        reasons[reason] = reasons.get(reason, 0) + 1
    record = ShardRecord(
        key=job.key,
        config_hash=job.config_hash,
        inputs=list(job.inputs),
        outputs=[job.data_url, job.dropped_url],
        docs_in=docs_in,
        docs_out=kept.num_rows,
        dropped=dict(sorted(reasons.items())),
        stats=output.stats,
        bytes_in=bytes_in,
        bytes_out=_text_bytes(kept),
        seconds=round(time.perf_counter() - started, 3),
    )
    storage.write_json(job.record_url, record.relative_to(job.output_root).model_dump(mode="json"))
    return record


def _text_bytes(table: pa.Table) -> int:
    if "text" not in table.schema.names:
        return int(table.nbytes)
    return sum(len(t.encode("utf-8")) for t in table.column("text").to_pylist())


def run_shard(job: ShardJob, stage: TableStage, expands_rows: bool = False) -> ShardRecord:
    """Run one table shard unless it already finished; return its record either way."""
    done = finished_record(job)
    if done is not None:
        return done
    started = time.perf_counter()
    table = pa.concat_tables([storage.read_parquet(url) for url in job.inputs])
    bind = getattr(stage, "for_inputs", None)  # a stage whose fitted state is split per input shard (dedup)
    output = (bind(job.inputs) if bind is not None else stage).process(table)
    return commit_shard(job, output, stage.schema, table.num_rows, _text_bytes(table), started, expands_rows)


def finished_stage(output_root: str, config_hash: str) -> StageManifest | None:
    """The stage manifest if the whole stage finished under this config and every output is still there."""
    manifest = recorded_stage(output_root, config_hash)
    if manifest is None or not all(storage.exists(u) for u in manifest.outputs):
        return None
    return manifest


def recorded_stage(output_root: str, config_hash: str) -> StageManifest | None:
    """The stage manifest if the whole stage finished under this config, whether or not its outputs are still
    there: what a report of the build reads (the data card), not what a later stage may read from."""
    url = manifest_url(output_root)
    if not storage.exists(url):
        return None
    manifest = read_manifest(url)
    return manifest if manifest.config_hash == config_hash else None


def finalize_stage(
    stage: str,
    output_root: str,
    config_hash: str,
    config: dict[str, Any],
    records: list[ShardRecord],
    seconds: float,
    fit_seconds: float = 0.0,
    artifacts: dict[str, str] | None = None,
    facts: dict[str, str] | None = None,
) -> StageManifest:
    """Remove outputs of shards that no longer exist upstream, then write the manifest last. `seconds` is the
    shards' wall time; the manifest's `seconds` adds `fit_seconds`, the fits' own."""
    live = {r.key for r in records}
    for sub in ("data", "dropped", "_shards"):
        for url in storage.list_files(storage.join(output_root, sub)):
            if shard_key(url) not in live:
                storage.remove(url)
    manifest = aggregate(stage, config_hash, config, records, seconds + fit_seconds, artifacts, facts, fit_seconds)
    write_manifest(manifest_url(output_root), manifest)
    return manifest


def data_shards(output_root: str) -> list[str]:
    """The kept-document shards of a finished stage, in deterministic order."""
    return storage.list_files(storage.join(output_root, "data"), ".parquet")
