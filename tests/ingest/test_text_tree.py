from __future__ import annotations

import gzip
import tracemalloc
from collections import Counter
from pathlib import Path

import pytest

from pretrain_core.ingest.config import IngestConfig, SourceConfig
from pretrain_core.ingest.records import RawDoc
from pretrain_core.ingest.text_tree import read_text_file


def _read(path: Path, cfg: IngestConfig | None = None) -> tuple[RawDoc, Counter[str]]:
    config = SourceConfig(name="t", domain="general", format="text", path=str(path.parent))
    stats: Counter[str] = Counter()
    docs = list(read_text_file(str(path), path.name, config, cfg or IngestConfig(), stats))
    assert len(docs) == 1  # one file, one document or one drop
    return docs[0], stats


def test_a_text_file_is_one_document(licenses: Path) -> None:
    doc, _ = _read(licenses / "Apache-2.0")
    assert doc.reason is None and doc.text == (licenses / "Apache-2.0").read_text(encoding="utf-8")
    assert doc.location == "Apache-2.0"


def test_compressed_text_is_decompressed(tmp_path: Path, licenses: Path) -> None:
    (tmp_path / "gpl.txt.gz").write_bytes(gzip.compress((licenses / "GPL-3").read_bytes()))
    doc, _ = _read(tmp_path / "gpl.txt.gz")
    assert doc.text.startswith("                    GNU GENERAL PUBLIC LICENSE")


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "empty_file"),
        (b"\x7fELF\x02\x01\x01\x00\x00\x00binary", "binary_file"),
        ("Grüße aus Köln".encode("latin-1"), "invalid_utf8"),
    ],
)
def test_unusable_files_are_dropped_with_reason(tmp_path: Path, data: bytes, reason: str) -> None:
    (tmp_path / "f").write_bytes(data)
    doc, stats = _read(tmp_path / "f")
    assert doc.reason == reason
    assert stats["empty_files"] == (reason == "empty_file")


def test_a_50mb_file_is_too_large_without_being_loaded(tmp_path: Path, licenses: Path) -> None:
    gpl = (licenses / "GPL-3").read_bytes()
    with open(tmp_path / "big.txt", "wb") as out:
        for _ in range(50_000_000 // len(gpl) + 1):
            out.write(gpl)
    tracemalloc.start()
    try:
        doc, _ = _read(tmp_path / "big.txt", IngestConfig(preview_chars=200))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert doc.reason == "too_large" and doc.text.startswith("                    GNU GENERAL PUBLIC LICENSE")
    assert peak < 10_000_000, f"peak {peak / 1e6:.1f} MB"
