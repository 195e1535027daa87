from __future__ import annotations

import pydoc_data.topics
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from pretrain_core.ingest.config import IngestConfig, SourceConfig
from pretrain_core.ingest.records import RawDoc
from pretrain_core.ingest.warc import read_warc


def _read(path: Path, cfg: IngestConfig | None = None) -> tuple[list[RawDoc], Counter[str]]:
    config = SourceConfig(name="crawl", domain="general", format="warc", path=str(path.parent))
    stats: Counter[str] = Counter()
    return list(read_warc(str(path), path.name, config, cfg or IngestConfig(), stats)), stats


@pytest.mark.parametrize("gzip", [True, False])
def test_pages_are_extracted_and_non_documents_are_accounted_for(
    tmp_path: Path, write_crawl: Callable[..., None], crawl_topics: tuple[str, ...], gzip: bool
) -> None:
    name = "crawl.warc.gz" if gzip else "crawl.warc"
    write_crawl(tmp_path / name, gzip=gzip)
    docs, stats = _read(tmp_path / name)
    outcome = [(d.location.split(" ", 1)[1], d.reason) for d in docs]
    assert outcome == [
        *((f"https://docs.example/{t}", None) for t in crawl_topics),
        ("https://docs.example/old", "http_not_ok"),
        ("https://docs.example/logo.png", "unsupported_content_type"),
        ("https://docs.example/with", None),
    ]
    assert stats["warc_records_skipped"] == 1 + len(crawl_topics)  # warcinfo and requests
    assert 'The "if" statement is used for conditional execution' in docs[0].text
    assert "Privacy policy" not in docs[0].text
    assert docs[-1].text == pydoc_data.topics.topics["with"]
    offsets = [int(d.location.split(" ")[0].rsplit(":", 1)[1]) for d in docs]
    assert offsets == sorted(set(offsets)) and offsets[0] > 0  # byte offsets of distinct records, after warcinfo


def test_truncated_crawl_keeps_complete_records_and_flags_the_file(
    tmp_path: Path, write_crawl: Callable[..., None]
) -> None:
    write_crawl(tmp_path / "full.warc.gz")
    data = (tmp_path / "full.warc.gz").read_bytes()
    docs, _ = _read(tmp_path / "full.warc.gz")
    third_page_offset = int(docs[2].location.split(" ")[0].rsplit(":", 1)[1])
    (tmp_path / "cut.warc.gz").write_bytes(data[: third_page_offset + 600])
    docs, _ = _read(tmp_path / "cut.warc.gz")
    assert [d.reason for d in docs] == [None, None, "truncated_compressed_file"]
    assert docs[-1].location == "cut.warc.gz"


@pytest.mark.parametrize("where", ["header", "trailer"])
def test_a_warc_gz_cut_inside_its_last_member_is_counted_truncated_like_other_codecs(
    tmp_path: Path, write_crawl: Callable[..., None], where: str
) -> None:
    """warcio ends quietly where the last member breaks off in its record's header or lacks its gzip trailer."""
    write_crawl(tmp_path / "whole.warc.gz")
    docs, _ = _read(tmp_path / "whole.warc.gz")
    data = (tmp_path / "whole.warc.gz").read_bytes()
    last = int(docs[-1].location.split(" ")[0].rsplit(":", 1)[1])  # the WET record ends the crawl
    (tmp_path / "cut.warc.gz").write_bytes(data[: last + 20] if where == "header" else data[:-4])
    cut_docs, _ = _read(tmp_path / "cut.warc.gz")
    assert cut_docs[-1].reason == "truncated_compressed_file" and cut_docs[-1].location == "cut.warc.gz"
    kept = docs[:-1] if where == "header" else docs  # a record whose bytes all arrived is kept
    assert [d.location for d in cut_docs[:-1]] == [d.location.replace("whole", "cut") for d in kept]


def test_oversized_page_is_dropped_before_extraction(
    tmp_path: Path, write_crawl: Callable[..., None], crawl_topics: tuple[str, ...]
) -> None:
    write_crawl(tmp_path / "c.warc.gz")
    docs, _ = _read(tmp_path / "c.warc.gz", IngestConfig(max_doc_bytes=900))
    assert [d.reason for d in docs[: len(crawl_topics)]] == ["too_large"] * len(crawl_topics)
    assert docs[0].text.startswith("<html><head><title>if</title>")


def test_empty_and_foreign_files_are_quarantined(tmp_path: Path, licenses: Path) -> None:
    (tmp_path / "empty.warc.gz").write_bytes(b"")
    (tmp_path / "gpl.warc").write_bytes((licenses / "GPL-3").read_bytes())
    empty, stats = _read(tmp_path / "empty.warc.gz")
    assert [(d.reason, stats["empty_files"]) for d in empty] == [("empty_file", 1)]
    (foreign,) = _read(tmp_path / "gpl.warc")[0]
    assert foreign.reason == "invalid_warc"


def test_a_corrupt_gzip_member_costs_only_its_record(
    tmp_path: Path, write_crawl: Callable[..., None], crawl_topics: tuple[str, ...]
) -> None:
    write_crawl(tmp_path / "full.warc.gz")
    full, _ = _read(tmp_path / "full.warc.gz")
    third_page_offset = int(full[2].location.split(" ")[0].rsplit(":", 1)[1])
    data = bytearray((tmp_path / "full.warc.gz").read_bytes())
    for i in range(third_page_offset + 100, third_page_offset + 140):
        data[i] ^= 0x55  # scramble deflate data inside the third page's gzip member
    (tmp_path / "bad.warc.gz").write_bytes(bytes(data))
    docs, stats = _read(tmp_path / "bad.warc.gz")
    assert [d.reason for d in docs] == [None, None, "invalid_warc", *(d.reason for d in full[3:])]
    assert docs[2].location == f"bad.warc.gz:{third_page_offset}"
    assert [d.text for d in docs[3:]] == [d.text for d in full[3:]] and stats["warc_resyncs"] == 1


def _plain_crawl(tmp_path: Path, write_crawl: Callable[..., None]) -> tuple[bytes, list[RawDoc], list[int]]:
    """An uncompressed crawl, what it reads as, and the offset of each page's record."""
    write_crawl(tmp_path / "plain.warc", gzip=False)
    data = (tmp_path / "plain.warc").read_bytes()
    docs, _ = _read(tmp_path / "plain.warc")
    return data, docs, [int(d.location.split(" ")[0].rsplit(":", 1)[1]) for d in docs]


def _with_length(data: bytes, record_offset: int, change: Callable[[int], bytes]) -> bytes:
    start = data.index(b"Content-Length: ", record_offset) + len(b"Content-Length: ")
    end = data.index(b"\r\n", start)
    return data[:start] + change(int(data[start:end])) + data[end:]


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda n: str(n - 300).encode(), id="too-short"),
        pytest.param(lambda n: str(n + 700).encode(), id="too-long"),
        pytest.param(lambda n: b"99999999", id="past-the-end"),
        pytest.param(lambda n: b"many", id="not-a-number"),
    ],
)
def test_a_record_with_a_wrong_length_is_dropped_and_reading_resumes_at_the_next(
    tmp_path: Path, write_crawl: Callable[..., None], change: Callable[[int], bytes]
) -> None:
    data, full, offsets = _plain_crawl(tmp_path, write_crawl)
    (tmp_path / "bad.warc").write_bytes(_with_length(data, offsets[1], change))
    docs, stats = _read(tmp_path / "bad.warc")
    assert docs[1].reason == "invalid_warc" and docs[1].location == f"bad.warc:{offsets[1]}"
    assert [(d.text, d.reason) for i, d in enumerate(docs) if i != 1] == [
        (d.text, d.reason) for i, d in enumerate(full) if i != 1
    ]
    assert stats["warc_resyncs"] == 1


def test_records_with_garbage_headers_cost_only_themselves(tmp_path: Path, write_crawl: Callable[..., None]) -> None:
    data, full, offsets = _plain_crawl(tmp_path, write_crawl)
    garbage = b"WARC/1.0\r\nthis is: not\x00 a header\r\nnor this\r\n\r\n"  # no type, no length
    first_line = len(b"WARC/1.0")
    broken = data[: offsets[2]] + garbage + data[offsets[2] : offsets[3]] + b"GARBAGE" + data[offsets[3] + first_line :]
    (tmp_path / "bad.warc").write_bytes(broken)
    docs, stats = _read(tmp_path / "bad.warc")
    assert [d.text for d in docs if d.reason is None] == [
        d.text for i, d in enumerate(full) if d.reason is None and i != 3
    ]
    reasons = [d.reason for d in full]
    assert [d.reason for d in docs] == [*reasons[:2], "invalid_warc", reasons[2], "invalid_warc", *reasons[4:]]
    assert docs[2].text.startswith("a record without WARC-Type") and "first line: GARBAGE" in docs[4].text
    assert stats["warc_resyncs"] == 2


def test_a_plain_crawl_cut_mid_record_keeps_what_came_before(tmp_path: Path, write_crawl: Callable[..., None]) -> None:
    data, full, offsets = _plain_crawl(tmp_path, write_crawl)
    (tmp_path / "cut.warc").write_bytes(data[: offsets[3] + 700])
    docs, _ = _read(tmp_path / "cut.warc")
    assert [d.reason for d in docs] == [None, None, None, "truncated_compressed_file"]
    assert [d.text for d in docs[:3]] == [d.text for d in full[:3]] and docs[3].location == "cut.warc"
