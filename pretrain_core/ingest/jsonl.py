"""JSON Lines reader (plain, .gz, .zst, .bz2, .xz): one document per line, read line by line in bounded memory.

Locations are `<file>:<line number>` (1-based, blank lines counted) so a record can be found with `sed -n Np`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import IO

from pretrain_core.ingest.compression import open_decompressed
from pretrain_core.ingest.config import IngestConfig, SourceConfig
from pretrain_core.ingest.languages import language_of_path
from pretrain_core.ingest.records import (
    EMPTY_FILE,
    INVALID_UTF8,
    TOO_LARGE,
    RawDoc,
    bounded_lines,
    dropped,
    from_fields,
    guarded,
)

MALFORMED_JSON = "malformed_json"


def read_jsonl(url: str, rel: str, source: SourceConfig, cfg: IngestConfig, stats: Counter[str]) -> Iterator[RawDoc]:
    """Every line of the file as a document or a drop; a cut-off compressed file keeps the lines before the cut."""
    with open_decompressed(url) as stream:
        yield from guarded(rel, _lines(stream, rel, source, cfg, stats))


def _lines(
    stream: IO[bytes], rel: str, source: SourceConfig, cfg: IngestConfig, stats: Counter[str]
) -> Iterator[RawDoc]:
    records = 0
    reads_path = source.path_field is not None and source.domain == "code"
    for number, (line, too_long) in enumerate(bounded_lines(stream, cfg.max_doc_bytes), start=1):
        location = f"{rel}:{number}"
        if too_long:
            records += 1
            yield dropped(location, TOO_LARGE, line[: cfg.preview_chars * 4].decode("utf-8", errors="replace"))
            continue
        if not line or line.isspace():
            stats["blank_lines"] += 1
            continue
        records += 1
        try:
            decoded = line.decode("utf-8")
        except UnicodeDecodeError:
            yield dropped(location, INVALID_UTF8, line.decode("utf-8", errors="replace"))
            continue
        try:
            record = json.loads(decoded)
        except (json.JSONDecodeError, RecursionError):  # nesting deeper than the parser's stack is malformed too
            yield dropped(location, MALFORMED_JSON, decoded)
            continue
        if not isinstance(record, dict):
            yield dropped(location, MALFORMED_JSON, decoded)
            continue
        record_id = record.get(source.id_field) if source.id_field else None
        language = language_of_path(record.get(source.path_field), source.code_extensions) if reads_path else None
        licence = record.get(source.licence_field) if source.licence_field else None
        text = record.get(source.text_field)
        yield from_fields(location, text, record_id, source.id_field is not None, language, licence)
    if records == 0:
        stats["empty_files"] += 1
        yield dropped(rel, EMPTY_FILE)
