"""WARC / WET reader: HTML responses become their main text, WET conversion records are taken as they are.

Locations are `<file>:<byte offset of the record> <target URL>`: the offset is what `warcio extract` and CDX
indexes use to fetch the record back, and the URL says where the page came from. Request, metadata, warcinfo
and revisit records hold no document and are only counted (`warc_records_skipped`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import IO, Any

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from pretrain_core import storage
from pretrain_core.ingest.compression import TRUNCATED
from pretrain_core.ingest.config import IngestConfig, SourceConfig
from pretrain_core.ingest.html import extract_main_text
from pretrain_core.ingest.records import EMPTY_FILE, TOO_LARGE, RawDoc, decode_utf8, dropped, guarded, read_capped

INVALID_WARC = "invalid_warc"
HTTP_NOT_OK = "http_not_ok"
UNSUPPORTED_CONTENT_TYPE = "unsupported_content_type"
NO_MAIN_TEXT = "no_main_text"

_DOCUMENT_RECORDS = {"response", "resource", "conversion"}
_HTML_TYPES = {"text/html", "application/xhtml+xml"}


def read_warc(url: str, rel: str, source: SourceConfig, cfg: IngestConfig, stats: Counter[str]) -> Iterator[RawDoc]:
    """Every document record of the file; a file that breaks off keeps its complete records plus one drop."""
    fs, path = storage.filesystem(url)
    if fs.size(path) == 0:
        stats["empty_files"] += 1
        yield dropped(rel, EMPTY_FILE)
        return
    with fs.open(path, "rb") as handle:
        yield from guarded(rel, _records(handle, rel, cfg, stats))


def _records(handle: IO[bytes], rel: str, cfg: IngestConfig, stats: Counter[str]) -> Iterator[RawDoc]:
    records = ArchiveIterator(handle)
    seen = 0
    try:
        for record in records:
            seen += 1
            if record.format != "warc":  # warcio also parses ARC, and mistakes any text for it
                yield dropped(rel, INVALID_WARC, f"record {seen} is {record.format}, not WARC")
                return
            if record.rec_type not in _DOCUMENT_RECORDS:
                stats["warc_records_skipped"] += 1
                continue
            target = record.rec_headers.get_header("WARC-Target-URI") or ""
            body, too_large = read_capped(record.content_stream(), cfg.max_doc_bytes)
            if not too_large and record.raw_stream.limit > 0:  # the record ended before its Content-Length
                yield dropped(rel, TRUNCATED, body[: cfg.preview_chars * 4].decode("utf-8", errors="replace"))
                return
            location = f"{rel}:{records.get_record_offset()} {target}".rstrip()
            yield _document(record, location, target, body, too_large, cfg, stats)
    except ArchiveLoadFailed as error:
        yield dropped(rel, INVALID_WARC, str(error))
        return
    if seen == 0:
        yield dropped(rel, INVALID_WARC, "no WARC record could be read")


def _document(
    record: Any, location: str, target: str, body: bytes, too_large: bool, cfg: IngestConfig, stats: Counter[str]
) -> RawDoc:
    """The document one record holds, or why it holds none."""
    if record.rec_type == "response" and record.http_headers is not None:
        status = record.http_headers.get_statuscode() or ""
        if not status.startswith("2"):
            return dropped(location, HTTP_NOT_OK, f"HTTP {status}")
        content_type = record.http_headers.get_header("Content-Type") or ""
    else:
        content_type = record.rec_headers.get_header("Content-Type") or ""
    mime = content_type.split(";", 1)[0].strip().lower()
    if too_large:
        return dropped(location, TOO_LARGE, body[: cfg.preview_chars * 4].decode("utf-8", errors="replace"))
    if mime == "text/plain":
        return decode_utf8(location, body)
    if mime not in _HTML_TYPES:
        return dropped(location, UNSUPPORTED_CONTENT_TYPE, content_type)
    text, used_fallback = extract_main_text(body, target or None, cfg)
    if not text:
        return dropped(location, NO_MAIN_TEXT, body[: cfg.preview_chars * 4].decode("utf-8", errors="replace"))
    if used_fallback:
        stats["html_fallback"] += 1
    return RawDoc(location=location, text=text)
