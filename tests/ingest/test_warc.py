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


def test_corruption_mid_file_keeps_earlier_records_and_adds_one_drop(
    tmp_path: Path, write_crawl: Callable[..., None]
) -> None:
    write_crawl(tmp_path / "full.warc.gz")
    third_page_offset = int(_read(tmp_path / "full.warc.gz")[0][2].location.split(" ")[0].rsplit(":", 1)[1])
    data = bytearray((tmp_path / "full.warc.gz").read_bytes())
    for i in range(third_page_offset + 100, third_page_offset + 140):
        data[i] ^= 0x55  # scramble deflate data inside the third page's gzip member
    (tmp_path / "bad.warc.gz").write_bytes(bytes(data))
    docs, _ = _read(tmp_path / "bad.warc.gz")
    assert [d.reason for d in docs[:2]] == [None, None] and len(docs) == 3
    assert docs[2].location == "bad.warc.gz" and docs[2].reason in {"invalid_warc", "corrupt_compressed_file"}
