"""What every reader yields: a document found at a location, or the reason it cannot become one.

Readers never decide ids or output columns; they only report what they found where, so that nothing read is
lost without a reason and a human can go back to the exact line, row or record.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO, Any, NamedTuple

from pretrain_core.ingest.compression import failure_reason

EMPTY_FILE = "empty_file"
TOO_LARGE = "too_large"
INVALID_UTF8 = "invalid_utf8"
MISSING_TEXT_FIELD = "missing_text_field"
NON_STRING_TEXT = "non_string_text"
MISSING_ID_FIELD = "missing_id_field"


class RawDoc(NamedTuple):
    """One record of an input: its text, or (with `reason` set) why it is dropped and what it looked like.

    A NamedTuple rather than a frozen dataclass: readers make one per record, and tuples are built several
    times faster.
    """

    location: str  # "<path relative to the source base>[:<line, row or byte offset>][ <url>]"
    text: str  # the document, or for a dropped one as much of it as could be read (a preview)
    reason: str | None = None
    code_language: str | None = None
    record_id: str | None = None  # the record's own stable id, when the source names an id field
    licence: str | None = None  # the record's own licence as written, when the source names a licence field


def dropped(location: str, reason: str, text: str = "") -> RawDoc:
    return RawDoc(location=location, text=text, reason=reason)


def decode_utf8(location: str, data: bytes, code_language: str | None = None) -> RawDoc:
    """A document from UTF-8 bytes, or an `invalid_utf8` drop keeping the text decoded with replacements."""
    try:
        return RawDoc(location=location, text=data.decode("utf-8"), code_language=code_language)
    except UnicodeDecodeError:
        return dropped(location, INVALID_UTF8, data.decode("utf-8", errors="replace"))


def read_capped(stream: IO[bytes], max_bytes: int, chunk: int = 1 << 20) -> tuple[bytes, bool]:
    """Up to `max_bytes` of the stream and whether there was more, never holding more than one chunk extra."""
    parts: list[bytes] = []
    size = 0
    while size <= max_bytes:
        part = stream.read(min(chunk, max_bytes + 1 - size))
        if not part:
            return b"".join(parts), False
        parts.append(part)
        size += len(part)
    return b"".join(parts)[:max_bytes], True


def bounded_lines(stream: IO[bytes], max_bytes: int, chunk: int = 1 << 20) -> Iterator[tuple[bytes, bool]]:
    """Lines without their newline, each as (bytes, too_long); a too-long line keeps only its first `max_bytes`.

    The rest of an over-long line is skipped chunk by chunk, so a 50 MB line costs about `max_bytes + chunk`.
    `read1` is preferred: it returns what was decompressed before a truncation raises, so those lines survive.
    """
    read = getattr(stream, "read1", stream.read)
    head: list[bytes] = []
    head_size = 0
    too_long = False
    while data := read(chunk):
        start = 0
        while (newline := data.find(b"\n", start)) >= 0:
            line = b"".join([*head, data[start:newline]]) if head else data[start:newline]
            yield (line[:max_bytes], True) if too_long or len(line) > max_bytes else (line, False)
            head, head_size, too_long = [], 0, False
            start = newline + 1
        if not too_long and start < len(data):
            head.append(data[start:])
            head_size += len(data) - start
            if head_size > max_bytes:
                head, head_size, too_long = [b"".join(head)[:max_bytes]], max_bytes, True
    if head or too_long:
        line = b"".join(head)
        yield (line[:max_bytes], True) if too_long or len(line) > max_bytes else (line, False)


def guarded(location: str, records: Iterator[RawDoc]) -> Iterator[RawDoc]:
    """Pass records through; if the compressed input breaks off, keep what was read and add one drop for the file."""
    try:
        yield from records
    except Exception as error:
        reason = failure_reason(error)
        if reason is None:
            raise
        yield dropped(location, reason, f"{type(error).__name__}: {error}")


def from_fields(
    location: str, text: Any, record_id: Any, needs_id: bool, code_language: str | None = None, licence: Any = None
) -> RawDoc:
    """A document from a record's text and id fields (and the language its path field gave, the licence its
    licence field names), or the reason they cannot make one."""
    if text is None:
        return dropped(location, MISSING_TEXT_FIELD)
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            return dropped(location, INVALID_UTF8, text.decode("utf-8", errors="replace"))
    if not isinstance(text, str):
        return dropped(location, NON_STRING_TEXT, json.dumps(text, ensure_ascii=False, default=str))
    licence = str(licence) if licence not in (None, "") else None
    if not needs_id:
        return RawDoc(location=location, text=text, code_language=code_language, licence=licence)
    if record_id is None or record_id == "":
        return dropped(location, MISSING_ID_FIELD, text)
    return RawDoc(location=location, text=text, record_id=str(record_id), code_language=code_language, licence=licence)
