from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pretrain_core.ingest.config import IngestConfig, SourceConfig
from pretrain_core.ingest.parquet import read_parquet
from pretrain_core.ingest.records import RawDoc


def _read(path: Path, **source: str) -> tuple[list[RawDoc], Counter[str]]:
    config = SourceConfig(name="t", domain="specialist", format="parquet", path=str(path.parent), **source)  # type: ignore[arg-type]
    stats: Counter[str] = Counter()
    return list(read_parquet(str(path), path.name, config, IngestConfig(), stats)), stats


def test_rows_become_documents_across_row_groups(tmp_path: Path, paragraphs: list[str]) -> None:
    table = pa.table({"content": paragraphs, "uid": [f"lic-{i}" for i in range(len(paragraphs))]})
    pq.write_table(table, tmp_path / "p.parquet", row_group_size=37)
    docs, _ = _read(tmp_path / "p.parquet", text_field="content", id_field="uid")
    assert [d.text for d in docs] == paragraphs
    assert [d.location for d in docs[:2]] == ["p.parquet:0", "p.parquet:1"]
    assert docs[100].record_id == "lic-100"


def test_a_code_rows_path_column_gives_its_language(tmp_path: Path) -> None:
    texts = ["a = 1\n", "let a = 1;\n", "?"]
    pq.write_table(pa.table({"text": texts, "path": ["a/b.py", "web/app.js", None]}), tmp_path / "c.parquet")
    config = SourceConfig(name="t", domain="code", format="parquet", path=str(tmp_path), path_field="path")
    docs = list(read_parquet(str(tmp_path / "c.parquet"), "c.parquet", config, IngestConfig(), Counter()))
    assert [d.code_language for d in docs] == ["python", "javascript", None]
    assert [d.text for d in docs] == texts


def test_null_text_missing_column_and_ids_are_dropped_by_row(tmp_path: Path, paragraphs: list[str]) -> None:
    pq.write_table(pa.table({"text": [paragraphs[0], None, paragraphs[2]]}), tmp_path / "n.parquet")
    docs, _ = _read(tmp_path / "n.parquet")
    assert [d.reason for d in docs] == [None, "missing_text_field", None]
    docs, _ = _read(tmp_path / "n.parquet", text_field="body")
    assert [(d.location, d.reason) for d in docs] == [(f"n.parquet:{i}", "missing_text_field") for i in range(3)]
    docs, _ = _read(tmp_path / "n.parquet", id_field="uid")
    assert [d.reason for d in docs] == ["missing_id_field", "missing_text_field", "missing_id_field"]


def test_binary_text_column_is_decoded_or_flagged(tmp_path: Path, paragraphs: list[str]) -> None:
    values = [paragraphs[0].encode(), "Grüße".encode("latin-1")]
    pq.write_table(pa.table({"text": pa.array(values, pa.binary())}), tmp_path / "b.parquet")
    docs, _ = _read(tmp_path / "b.parquet")
    assert docs[0].text == paragraphs[0] and docs[1].reason == "invalid_utf8"


def test_empty_and_corrupt_files_are_quarantined(tmp_path: Path, paragraphs: list[str]) -> None:
    pq.write_table(pa.table({"text": pa.array([], pa.string())}), tmp_path / "empty.parquet")
    (tmp_path / "zero.parquet").write_bytes(b"")
    pq.write_table(pa.table({"text": paragraphs}), tmp_path / "cut.parquet")
    (tmp_path / "cut.parquet").write_bytes((tmp_path / "cut.parquet").read_bytes()[:-100])
    for name, reason in [
        ("empty.parquet", "empty_file"),
        ("zero.parquet", "empty_file"),
        ("cut.parquet", "corrupt_parquet"),
    ]:
        docs, stats = _read(tmp_path / name)
        assert [(d.location, d.reason) for d in docs] == [(name, reason)]
        assert stats["empty_files"] == (reason == "empty_file")


def test_a_damaged_row_group_costs_its_rows_and_reading_goes_on(tmp_path: Path, paragraphs: list[str]) -> None:
    path = tmp_path / "pages.parquet"
    pq.write_table(pa.table({"text": paragraphs}), path, row_group_size=40, compression="snappy")
    meta = pq.ParquetFile(path).metadata
    column = meta.row_group(1).column(0)
    start = column.data_page_offset
    data = bytearray(path.read_bytes())
    data[start + 20 : start + 120] = bytes(100)  # zero a stretch of group 1's page: the snappy block no longer decodes
    path.write_bytes(bytes(data))
    docs, _ = _read(path)
    assert len(docs) == len(paragraphs)  # every row accounted for: read, or dropped at its location
    lost = [d for d in docs if d.reason == "corrupt_parquet"]
    assert lost and {int(d.location.split(":")[1]) for d in lost} <= set(range(40, 80))
    assert [d.text for d in docs if d.reason is None] == [p for i, p in enumerate(paragraphs) if not 40 <= i < 80]
