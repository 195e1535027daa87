"""Standalone stage runs tell an input's format from its bytes, so a WARC is never read as JSONL."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pyarrow as pa

from pretrain_core import storage
from pretrain_core.config import load_config
from pretrain_core.standalone import RawInputs, input_format, run_standalone
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


def test_directories_globs_and_plain_files_are_read_as_trees_of_documents(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "garden.txt").write_text("Tomatoes need sun and water every day.\n", encoding="utf-8")
    (tmp_path / "notes" / "README.md").write_text("# Notes\n\nWhat grows where.\n", encoding="utf-8")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "util.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    (tmp_path / "records").mkdir()
    (tmp_path / "records" / "a.jsonl").write_text(json.dumps({"text": "a"}) + "\n", encoding="utf-8")
    assert input_format(str(tmp_path / "notes")) == "text"
    assert input_format(str(tmp_path / "notes" / "*.md")) == "text"
    assert input_format(str(tmp_path / "notes" / "garden.txt")) == "text"
    assert input_format(str(tmp_path / "notes" / "README.md")) == "text"  # prose, though Pygments lexes Markdown
    assert input_format(str(tmp_path / "src"), "code") == "code"
    assert input_format(str(tmp_path / "src" / "util.py")) == "code"  # a source file by its extension
    assert input_format(str(tmp_path / "records")) == "jsonl"  # a directory of records: as its first file says
    assert input_format(str(tmp_path / "absent.data")) == "jsonl"  # its reader says it is not there

    notes = run_standalone(load_config(), "ingest", [str(tmp_path / "notes")], str(tmp_path / "notes-out"))["ingest"]
    assert (notes.docs_in, notes.docs_out, notes.dropped) == (2, 2, {})
    code = run_standalone(
        load_config(), "ingest", [str(tmp_path / "src" / "util.py")], str(tmp_path / "code-out"), RawInputs("code")
    )["ingest"]
    table = storage.read_parquet(next(url for url in code.outputs if "/data/" in url))
    assert table.column("code_language").to_pylist() == ["python"] and table.column("domain").to_pylist() == ["code"]


def test_a_warc_given_to_ingest_alone_is_read_as_a_warc(tmp_path: Path) -> None:
    manifest = run_standalone(load_config(), "ingest", [str(WARC)], str(tmp_path / "out"))["ingest"]
    assert manifest.docs_out > 100 and "malformed_json" not in manifest.dropped


def test_a_file_too_damaged_to_sniff_is_left_to_its_reader_to_quarantine(tmp_path: Path) -> None:
    broken = tmp_path / "cut.jsonl.gz"
    broken.write_bytes(gzip.compress(b'{"text": "a"}\n' * 1000)[:40])
    assert input_format(str(broken)) == "jsonl"
    manifest = run_standalone(load_config(), "ingest", [str(broken)], str(tmp_path / "out"))["ingest"]
    assert manifest.dropped == {"truncated_compressed_file": 1}
