from __future__ import annotations

import gzip
import io
from collections.abc import Iterator
from pathlib import Path
from typing import IO, cast

import pytest

from pretrain_core.ingest.compression import TRUNCATED
from pretrain_core.ingest.records import (
    INVALID_UTF8,
    MISSING_ID_FIELD,
    MISSING_TEXT_FIELD,
    NON_STRING_TEXT,
    RawDoc,
    bounded_lines,
    decode_utf8,
    from_fields,
    guarded,
    read_capped,
)


@pytest.mark.parametrize("chunk", [1, 7, 64, 1 << 20])
def test_bounded_lines_split_like_splitlines_whatever_the_chunk(licenses: Path, chunk: int) -> None:
    data = (licenses / "GPL-3").read_bytes()
    lines = list(bounded_lines(io.BytesIO(data), max_bytes=10_000, chunk=chunk))
    assert [line for line, _ in lines] == data.split(b"\n")[:-1]  # the file ends with a newline
    assert not any(too_long for _, too_long in lines)


@pytest.mark.parametrize("chunk", [5, 100, 1 << 20])
def test_over_long_lines_are_flagged_and_cut_but_neighbours_survive(chunk: int) -> None:
    data = b"short one\n" + b"x" * 5000 + b"\nlast line without newline"
    lines = list(bounded_lines(io.BytesIO(data), max_bytes=1000, chunk=chunk))
    assert lines == [(b"short one", False), (b"x" * 1000, True), (b"last line without newline", False)]


def test_read_capped_stops_one_byte_past_the_cap(licenses: Path) -> None:
    data = (licenses / "Apache-2.0").read_bytes()
    assert read_capped(io.BytesIO(data), len(data)) == (data, False)
    head, too_large = read_capped(io.BytesIO(data), 100, chunk=7)
    assert too_large and head == data[:100]


def test_invalid_utf8_keeps_a_replacement_decoded_copy() -> None:
    assert decode_utf8("a.txt", "Grüße".encode()).text == "Grüße"
    bad = decode_utf8("a.txt", "Grüße".encode("latin-1"))
    assert bad.reason == INVALID_UTF8 and bad.text == "Gr\ufffd\ufffde"


def test_fields_missing_wrong_or_without_id_are_named() -> None:
    assert from_fields("f:1", None, None, needs_id=False).reason == MISSING_TEXT_FIELD
    assert from_fields("f:1", ["a"], None, needs_id=False).reason == NON_STRING_TEXT
    assert from_fields("f:1", "text", None, needs_id=True).reason == MISSING_ID_FIELD
    assert from_fields("f:1", "text", 42, needs_id=True) == RawDoc("f:1", "text", record_id="42")
    assert from_fields("f:1", b"bytes", None, needs_id=False).text == "bytes"


def test_guarded_keeps_records_before_a_truncation_and_adds_one_drop(licenses: Path) -> None:
    data = gzip.compress((licenses / "GPL-3").read_bytes())
    stream = cast(IO[bytes], gzip.GzipFile(fileobj=io.BytesIO(data[: len(data) // 2])))

    def lines() -> Iterator[RawDoc]:
        for number, (line, _) in enumerate(bounded_lines(stream, 10_000, chunk=256), start=1):
            yield RawDoc(f"gpl.gz:{number}", line.decode())

    out = list(guarded("gpl.gz", lines()))
    assert len(out) > 50 and all(r.reason is None for r in out[:-1])
    assert out[-1].reason == TRUNCATED and out[-1].location == "gpl.gz"


def test_guarded_lets_other_errors_through() -> None:
    def broken() -> Iterator[RawDoc]:
        yield RawDoc("x", "fine")
        raise KeyError("a bug, not bad input")

    with pytest.raises(KeyError):
        list(guarded("x", broken()))
