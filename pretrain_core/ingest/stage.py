"""The ingestion stage: raw files of every source → Parquet shards of the INGEST schema plus a quarantine.

`plan_ingest` lists each source's files and groups them into jobs keyed `<source>-<NNNNN>`; `run_ingest_shard`
reads a job's files with the source's reader, gives every record its stable id, applies the size and emptiness
limits, and commits the shard through `pretrain_core.stage.commit_shard`. Output row order is file order then
record order, so the same inputs always give byte-identical shards.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from pretrain_core import schema, storage
from pretrain_core.ingest.code_tree import read_code_file
from pretrain_core.ingest.config import IngestConfig, SourceConfig
from pretrain_core.ingest.jsonl import read_jsonl
from pretrain_core.ingest.listing import SourceFile, list_source_files, relative_path, source_base, source_identity
from pretrain_core.ingest.parquet import read_parquet
from pretrain_core.ingest.records import INVALID_UTF8, TOO_LARGE, RawDoc
from pretrain_core.ingest.sniff import RECORD_FORMATS, content_format
from pretrain_core.ingest.text_tree import read_text_file
from pretrain_core.ingest.warc import read_warc
from pretrain_core.licences import NOASSERTION, normalize_licence
from pretrain_core.manifest import ShardRecord
from pretrain_core.stage import ShardJob, ShardOutput, commit_shard, finished_record

if TYPE_CHECKING:
    from pretrain_core.config import PipelineConfig

log = logging.getLogger(__name__)

STAGE = "ingest"
EMPTY = "empty"
DUPLICATE_ID = "duplicate_id"
ID_CHARS = 20  # 80 bits of sha1: collisions stay improbable well past 10^9 documents

Reader = Callable[[str, str, SourceConfig, IngestConfig, Counter[str]], Iterator[RawDoc]]
READERS: dict[str, Reader] = {
    "jsonl": read_jsonl,
    "parquet": read_parquet,
    "text": read_text_file,
    "code": read_code_file,
    "warc": read_warc,
    "wet": read_warc,
}
_TREE_FORMATS = {"text", "code"}  # one document per file: many files share a shard


def plan_ingest(sources: list[SourceConfig], output_root: str, config_hash: str, cfg: IngestConfig) -> list[ShardJob]:
    """One job per record file (jsonl, parquet, WARC) or per group of tree files, in a deterministic order."""
    names = [s.name for s in sources]
    if len(set(names)) != len(names):
        raise ValueError(f"source names must be unique: {names}")
    jobs = []
    for source in sources:
        _warn_of_licence(source, cfg)
        files = list_source_files(source)
        groups = _group_tree(files, cfg) if source.format in _TREE_FORMATS else [[f] for f in files]
        for index, group in enumerate(groups):
            key = f"{source.name}-{index:05d}"
            jobs.append(ShardJob(STAGE, key, tuple(f.url for f in group), output_root, config_hash))
    return jobs


def _warn_of_licence(source: SourceConfig, cfg: IngestConfig) -> None:
    """One line, before reading, when a source's declared licence means its documents will be NOASSERTION or
    dropped (the counts say how many afterwards)."""
    if source.licence_field is not None:
        return
    licence = source.licence or NOASSERTION
    if licence == NOASSERTION and cfg.licences.permits(licence):
        log.warning("source %s states no licence: its documents are NOASSERTION (set sources[].licence)", source.name)
    elif not cfg.licences.permits(licence):
        log.warning(
            "source %s: ingest.licences refuses its licence %s; its documents are dropped", source.name, licence
        )


def _group_tree(files: list[SourceFile], cfg: IngestConfig) -> list[list[SourceFile]]:
    """Consecutive files up to `docs_per_shard` files and `bytes_per_shard` bytes per group."""
    groups: list[list[SourceFile]] = []
    current: list[SourceFile] = []
    size = 0
    for file in files:
        if current and (len(current) >= cfg.docs_per_shard or size + file.size > cfg.bytes_per_shard):
            groups.append(current)
            current, size = [], 0
        current.append(file)
        size += file.size
    if current:
        groups.append(current)
    return groups


def source_of(job: ShardJob, sources: list[SourceConfig]) -> SourceConfig:
    """The source a job was planned for, from its key prefix."""
    name = job.key.rsplit("-", 1)[0]
    for source in sources:
        if source.name == name:
            return source
    raise KeyError(f"job {job.key}: no source named {name!r}")


def run_ingest_shard(job: ShardJob, source: SourceConfig, cfg: IngestConfig) -> ShardRecord:
    """Ingest one job's files unless the same files already finished under the same config hash."""
    done = finished_record(job)
    if done is not None and done.inputs == list(job.inputs):
        return done
    started = time.perf_counter()
    output, docs_in, bytes_in = ingest_files(list(job.inputs), source, cfg)
    return commit_shard(job, output, schema.INGEST, docs_in, bytes_in, started, expands_rows=True)


def ingest_files(urls: list[str], source: SourceConfig, cfg: IngestConfig) -> tuple[ShardOutput, int, int]:
    """(output, records found, bytes read) for files of one source, without writing anything."""
    stats: Counter[str] = Counter(files=len(urls), empty_files=0)
    kept: list[tuple[str | None, ...]] = []  # (id, text, licence, location, code_language[, drop_reason])
    dropped: list[tuple[str | None, ...]] = []
    seen_ids: set[str] = set()
    records = bytes_in = 0
    base = source_base(source)
    for url in urls:
        fs, path = storage.filesystem(url)
        bytes_in += int(fs.size(path) or 0)
        read = READERS[_format_of(url, source, stats)]
        for raw in read(url, relative_path(base, url), source, cfg, stats):
            records += 1
            text, reason = raw.text, raw.reason
            licence = _licence(raw, source, stats)
            if reason is None:
                text, reason = _check(text, cfg)
            if reason is None:
                reason = cfg.licences.drop_reason(licence)
            doc_id = document_id(source.name, raw)
            if reason is None and doc_id in seen_ids:
                reason = DUPLICATE_ID
            seen_ids.add(doc_id)
            if reason is None:
                kept.append((doc_id, text, licence, raw.location, raw.code_language))
            else:
                dropped.append((doc_id, _preview(text, cfg), licence, raw.location, raw.code_language, reason))
    output = ShardOutput(
        kept=_table(kept, source, schema.INGEST),
        dropped=_table(dropped, source, schema.dropped_schema(schema.INGEST)),
        stats={name: float(count) for name, count in sorted(stats.items())},
    )
    return output, records, bytes_in


def _format_of(url: str, source: SourceConfig, stats: Counter[str]) -> str:
    """The source's format, unless the file's bytes plainly say another record format (a Parquet file among
    JSONL, a crawl named .jsonl): then that one, counted as `format_from_content`."""
    if source.format not in RECORD_FORMATS:
        return source.format
    found = content_format(url)
    if found is None or found == source.format or {found, source.format} == {"warc", "wet"}:
        return source.format
    stats["format_from_content"] += 1
    return found


def _licence(raw: RawDoc, source: SourceConfig, stats: Counter[str]) -> str:
    """The record's own licence when it names one (normalised; unreadable: NOASSERTION, counted), else its
    source's, else NOASSERTION."""
    if raw.licence is None:
        return source.licence or NOASSERTION
    try:
        return _normalized(raw.licence)
    except ValueError:
        stats["licence_unreadable"] += 1
        return NOASSERTION


@lru_cache(maxsize=4096)
def _normalized(licence: str) -> str:
    """`normalize_licence`, once per distinct spelling: a corpus names a few licences over and over."""
    return normalize_licence(licence)


def _table(rows: list[tuple[str | None, ...]], source: SourceConfig, target: pa.Schema) -> pa.Table:
    """Rows of (id, text, licence, location, code_language[, drop_reason]) as a table of the stage schema."""
    columns = list(zip(*rows, strict=True)) if rows else [()] * (len(target) - 2)
    data = {
        "id": columns[0],
        "text": columns[1],
        "source": [source.name] * len(rows),
        "domain": [source.domain] * len(rows),
        "licence": columns[2],
        "location": columns[3],
        "code_language": columns[4],
        **({"drop_reason": columns[5]} if len(columns) > 5 else {}),
    }
    return pa.table(data, schema=target)


def document_id(source_name: str, raw: RawDoc) -> str:
    """Stable id: sha1 of the source name and the record's own id when it has one, else of its location."""
    key = f"id={raw.record_id}" if raw.record_id is not None else raw.location
    return hashlib.sha1(f"{source_name}\n{key}".encode()).hexdigest()[:ID_CHARS]


def _check(text: str, cfg: IngestConfig) -> tuple[str, str | None]:
    """(text fit for Arrow, drop reason or None): unpaired surrogates from JSON escapes, size and emptiness."""
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return text.encode("utf-8", errors="replace").decode("utf-8"), INVALID_UTF8
    if size > cfg.max_doc_bytes:
        return text, TOO_LARGE
    if len(text.strip()) < cfg.min_doc_chars:
        return text, EMPTY
    return text, None


def _preview(text: str, cfg: IngestConfig) -> str:
    """The start of a dropped document, enough to judge the drop; surrogates replaced so Arrow can store it."""
    return text[: cfg.preview_chars].encode("utf-8", errors="replace").decode("utf-8")


def settings_of(cfg: PipelineConfig) -> dict[str, Any]:
    """What ingest's outputs depend on: each source's settings with what its files hold in place of where they lie
    (`source_identity`), and the ingest settings (the stage registry's hook)."""
    sources = [
        {**source.model_dump(mode="json", exclude={"path"}), "content": source_identity(source)}
        for source in cfg.sources
    ]
    return {"sources": sources, "ingest": cfg.ingest}
