"""WARC / WET reader: HTML responses become their main text, WET conversion records are taken as they are.

Locations are `<file>:<byte offset of the record> <target URL>`: the offset is what `warcio extract` and CDX
indexes use to fetch the record back, and the URL says where the page came from. Request, metadata, warcinfo
and revisit records hold no document and are only counted (`warc_records_skipped`).

Damage costs only the damaged stretch: warcio reads from a record start until something does not parse, or a
record's Content-Length does not land on the next record (warcio notices and counts it); that stretch is one
`invalid_warc` drop at its offset and a new pass starts at the next record start, found by scanning the bytes.
"""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Iterator
from typing import IO, Any

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed
from warcio.statusandheaders import StatusAndHeadersParserException

from pretrain_core import storage
from pretrain_core.ingest.compression import TRUNCATED
from pretrain_core.ingest.config import IngestConfig, SourceConfig
from pretrain_core.ingest.html import extract_main_text
from pretrain_core.ingest.records import EMPTY_FILE, TOO_LARGE, RawDoc, decode_utf8, dropped, guarded, read_capped

INVALID_WARC = "invalid_warc"
HTTP_NOT_OK = "http_not_ok"
UNSUPPORTED_CONTENT_TYPE = "unsupported_content_type"
NO_MAIN_TEXT = "no_main_text"

_GZIP_MAGIC = b"\x1f\x8b"
_GZIP_MEMBER = b"\x1f\x8b\x08"  # magic plus deflate: where a record of a .warc.gz starts
_SCAN_CHUNK = 1 << 20
_BAD_LENGTH = "Content-Length does not end at a record boundary"
_DOCUMENT_RECORDS = {"response", "resource", "conversion"}
_HTML_TYPES = {"text/html", "application/xhtml+xml"}


def read_warc(url: str, rel: str, source: SourceConfig, cfg: IngestConfig, stats: Counter[str]) -> Iterator[RawDoc]:
    """Every document record of the file. Damage costs only the damaged part: a record whose header cannot be
    parsed, or whose Content-Length does not end at a record boundary, is one `invalid_warc` drop and reading
    resumes at the next record start (a `WARC/1.x` line, or a gzip member); a file that breaks off keeps its
    complete records plus one drop."""
    fs, path = storage.filesystem(url)
    size = int(fs.size(path) or 0)
    if size == 0:
        stats["empty_files"] += 1
        yield dropped(rel, EMPTY_FILE)
        return
    with fs.open(path, "rb") as handle:
        gzipped = handle.read(2) == _GZIP_MAGIC
        start: int | None = 0
        while start is not None:
            handle.seek(start)
            outcome = _Outcome()
            yield from guarded(rel, _records(handle, rel, cfg, stats, outcome))
            if outcome.failed_at is None:
                if cut := _cut_tail(handle, outcome, size, gzipped):
                    yield dropped(rel, TRUNCATED, cut)
                return
            start = _next_record_start(handle, outcome.failed_at + 1, gzipped)
            if start is None and outcome.ran_out:  # the last record breaks off: the file was cut
                yield dropped(rel, TRUNCATED, outcome.why)
                return
            stats["warc_resyncs"] += start is not None
            skipped = (size if start is None else start) - outcome.failed_at
            yield dropped(f"{rel}:{outcome.failed_at}", INVALID_WARC, f"{outcome.why} ({skipped} bytes skipped)")


class _Outcome:
    """Where and why one pass of warcio over the file stopped before the end (`failed_at` None: it did not)."""

    def __init__(self) -> None:
        self.failed_at: int | None = None
        self.why = ""
        self.ran_out = False  # the record's Content-Length reaches past the end of the file
        self.last_start = 0  # where the last whole record starts
        self.end = 0  # where warcio stopped reading: the file's size when every byte was a whole record

    def fail(self, position: int, why: str, ran_out: bool = False) -> None:
        self.failed_at, self.why, self.ran_out = position, why, ran_out


def _cut_tail(handle: IO[bytes], outcome: _Outcome, size: int, gzipped: bool) -> str | None:
    """Why the file's end is cut, or None: warcio ends quietly where a last record breaks off inside its header, or
    where a last gzip member lacks its trailer, as other codecs' readers never do (they raise EOFError)."""
    handle.seek(outcome.end)
    rest = handle.read(_SCAN_CHUNK)
    if rest.strip():
        return f"{size - outcome.end} bytes after the last whole record"
    handle.seek(outcome.last_start)
    if gzipped and handle.read(len(_GZIP_MEMBER)) == _GZIP_MEMBER:  # a member per record, as WARC asks
        handle.seek(outcome.last_start)
        member = zlib.decompressobj(wbits=31)
        try:
            while (chunk := handle.read(_SCAN_CHUNK)) and not member.eof:
                member.decompress(chunk)
        except zlib.error:
            return None  # damage inside a record warcio read whole: not a cut
        if not member.eof:
            return "the last gzip member ends before its trailer"
    return None


def _next_record_start(handle: IO[bytes], position: int, gzipped: bool) -> int | None:
    """The offset of the first record start at or after ``position``: a gzip member's magic bytes, or a `WARC/1.`
    line; None when the file holds no more. Reads in chunks, so a long damaged stretch costs no memory."""
    marker = _GZIP_MEMBER if gzipped else b"\nWARC/1."
    skip = 0 if gzipped else 1  # the offset of the line, not of the newline before it
    handle.seek(max(position - len(marker) + 1, 0) if not gzipped else position)
    base = handle.tell()
    carry = b""
    while chunk := handle.read(_SCAN_CHUNK):
        data = carry + chunk
        found = data.find(marker)
        while found >= 0 and base + found + skip < position:
            found = data.find(marker, found + 1)
        if found >= 0:
            return base + found + skip
        keep = len(marker) - 1
        carry = data[-keep:]
        base += len(data) - len(carry)
    return None


class _ArchiveIterator(ArchiveIterator):
    """warcio's iterator without its stderr warning on a bad Content-Length: the reader drops and counts those."""

    INC_RECORD = ""


def _header_fault(record: Any) -> str | None:
    """What makes a record's header unusable: without a WARC-Type or a numeric Content-Length, warcio would read
    the rest of the file as its content."""
    length = record.rec_headers.get_header("Content-Length")
    if not record.rec_type:
        return "a record without WARC-Type"
    if length is None or not length.strip().isdigit():
        return f"a record without a valid Content-Length ({length!r})"
    return None


def _records(
    handle: IO[bytes], rel: str, cfg: IngestConfig, stats: Counter[str], outcome: _Outcome
) -> Iterator[RawDoc]:
    """One pass of warcio from the handle's position, until the end or the first damage (told to ``outcome``)."""
    records = _ArchiveIterator(handle)
    position = records.offset  # where the record being parsed starts
    try:
        for record in records:
            if record.format != "warc":  # warcio also parses ARC, and mistakes any text for it
                outcome.fail(position, f"a {record.format} record, not WARC")
                return
            if fault := _header_fault(record):
                outcome.fail(position, fault)
                return
            target = record.rec_headers.get_header("WARC-Target-URI") or ""
            is_document = record.rec_type in _DOCUMENT_RECORDS
            body, too_large = b"", False
            if is_document:
                body, too_large = read_capped(record.content_stream(), cfg.max_doc_bytes)
            else:
                records.read_to_end()  # reads the content past, so the check below sees whether it was all there
            if not too_large and record.raw_stream.limit > 0:  # the file ends before the record's Content-Length
                outcome.fail(position, body[: cfg.preview_chars * 4].decode("utf-8", errors="replace"), ran_out=True)
                return
            records.read_to_end()
            if records.err_count:  # what follows the record is not the next record: its length is wrong
                outcome.fail(position, _BAD_LENGTH)
                return
            outcome.last_start, position = position, records.offset
            if not is_document:
                stats["warc_records_skipped"] += 1
                continue
            location = f"{rel}:{records.get_record_offset()} {target}".rstrip()
            yield _document(record, location, target, body, too_large, cfg, stats)
        outcome.end = position
    except (ArchiveLoadFailed, StatusAndHeadersParserException, ValueError, zlib.error) as error:
        # a damaged header or gzip member (a file that breaks off raises EOFError: `guarded` reports it)
        outcome.fail(position, f"unreadable record: {error}"[: cfg.preview_chars])


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
