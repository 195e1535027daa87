"""Standalone stage runs tell an input's format from its bytes, so a WARC is never read as JSONL."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pyarrow as pa

from pretrain_core import storage
from pretrain_core.config import load_config
from pretrain_core.standalone import input_format, run_standalone
from tests.shipped_text import DEMO

WARC = DEMO / "web" / "debian_faq.warc.gz"


def test_formats_come_from_the_bytes_whatever_the_name(tmp_path: Path) -> None:
    shutil.copy(WARC, tmp_path / "crawl.warc.gz")
    shutil.copy(WARC, tmp_path / "crawl.data")  # gzip without its suffix
    (tmp_path / "plain.warc").write_bytes(gzip.decompress(WARC.read_bytes())[:100_000])
    (tmp_path / "docs.jsonl").write_text(json.dumps({"text": "a"}) + "\n", encoding="utf-8")
    storage.write_parquet(str(tmp_path / "docs.bin"), pa.table({"text": ["a"]}))
    found = {p.name: input_format(str(p)) for p in sorted(tmp_path.iterdir())}
    assert found == {"crawl.data": "warc", "crawl.warc.gz": "warc", "docs.bin": "parquet", "docs.jsonl": "jsonl",
                     "plain.warc": "warc"}  # fmt: skip


def test_a_warc_given_to_ingest_alone_is_read_as_a_warc(tmp_path: Path) -> None:
    manifest = run_standalone(load_config(), "ingest", [str(WARC)], str(tmp_path / "out"))["ingest"]
    assert manifest.docs_out > 100 and "malformed_json" not in manifest.dropped


def test_a_file_too_damaged_to_sniff_is_left_to_its_reader_to_quarantine(tmp_path: Path) -> None:
    broken = tmp_path / "cut.jsonl.gz"
    broken.write_bytes(gzip.compress(b'{"text": "a"}\n' * 1000)[:40])
    assert input_format(str(broken)) == "jsonl"
    manifest = run_standalone(load_config(), "ingest", [str(broken)], str(tmp_path / "out"))["ingest"]
    assert manifest.dropped == {"truncated_compressed_file": 1}
