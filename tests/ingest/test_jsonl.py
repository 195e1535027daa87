from __future__ import annotations

import gzip
import json
import tracemalloc
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
import zstandard

from pretrain_core.ingest.config import IngestConfig, SourceConfig
from pretrain_core.ingest.jsonl import read_jsonl
from pretrain_core.ingest.records import RawDoc


def _read(path: Path, cfg: IngestConfig | None = None, **source: str) -> tuple[list[RawDoc], Counter[str]]:
    config = SourceConfig(name="t", domain="general", format="jsonl", path=str(path.parent), **source)  # type: ignore[arg-type]
    stats: Counter[str] = Counter()
    docs = list(read_jsonl(str(path), path.name, config, cfg or IngestConfig(), stats))
    return docs, stats


def _jsonl(records: list[object]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()


def test_a_line_nested_past_the_parsers_stack_is_malformed_not_fatal(tmp_path: Path, paragraphs: list[str]) -> None:
    deep = b'{"text": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    (tmp_path / "deep.jsonl").write_bytes(deep + b"\n" + json.dumps({"text": paragraphs[0]}).encode() + b"\n")
    docs, _ = _read(tmp_path / "deep.jsonl")
    assert [(d.location, d.reason) for d in docs] == [("deep.jsonl:1", "malformed_json"), ("deep.jsonl:2", None)]


@pytest.mark.parametrize(
    ("name", "compress"),
    [
        ("p.jsonl", lambda b: b),
        ("p.jsonl.gz", gzip.compress),
        ("p.jsonl.zst", lambda b: zstandard.ZstdCompressor().compress(b)),
    ],
)
def test_every_line_becomes_a_document_at_its_line_number(
    tmp_path: Path, paragraphs: list[str], name: str, compress: Callable[[bytes], bytes]
) -> None:
    (tmp_path / name).write_bytes(compress(_jsonl([{"text": p, "n": i} for i, p in enumerate(paragraphs)])))
    docs, stats = _read(tmp_path / name)
    assert [d.text for d in docs] == paragraphs
    assert [d.location for d in docs[:2]] == [f"{name}:1", f"{name}:2"]
    assert all(d.reason is None for d in docs) and stats["empty_files"] == 0


def test_each_bad_line_is_dropped_with_its_reason(tmp_path: Path, paragraphs: list[str]) -> None:
    lines = [
        json.dumps({"text": paragraphs[0]}).encode(),
        b'{"text": "unterminated',
        b"[1, 2, 3]",
        b'{"text": "' + paragraphs[1][:40].encode() + b' caf\xe9"}',  # Latin-1 byte in a UTF-8 file
        json.dumps({"body": paragraphs[2]}).encode(),
        json.dumps({"text": {"nested": paragraphs[3]}}).encode(),
        b"",
        json.dumps({"text": paragraphs[4]}).encode(),
    ]
    (tmp_path / "bad.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    docs, stats = _read(tmp_path / "bad.jsonl")
    assert [(d.location, d.reason) for d in docs] == [
        ("bad.jsonl:1", None),
        ("bad.jsonl:2", "malformed_json"),
        ("bad.jsonl:3", "malformed_json"),
        ("bad.jsonl:4", "invalid_utf8"),
        ("bad.jsonl:5", "missing_text_field"),
        ("bad.jsonl:6", "non_string_text"),
        ("bad.jsonl:8", None),
    ]
    assert "\ufffd" in docs[3].text  # the broken line is kept, readable, for a human to inspect
    assert docs[1].text == '{"text": "unterminated'
    assert stats["blank_lines"] == 1


@pytest.mark.parametrize(
    ("name", "compress"),
    [("cut.jsonl.gz", gzip.compress), ("cut.jsonl.zst", lambda b: zstandard.ZstdCompressor().compress(b))],
)
def test_truncated_file_keeps_what_was_read_and_says_so_once(
    tmp_path: Path, licenses: Path, name: str, compress: Callable[[bytes], bytes]
) -> None:
    texts = [p.strip() for f in sorted(licenses.glob("*")) for p in f.read_text().split("\n\n") if p.strip()]
    data = compress(_jsonl([{"text": t} for t in texts]))
    (tmp_path / name).write_bytes(data[: len(data) * 3 // 4])  # past the first 128 KiB zstd block
    docs, _ = _read(tmp_path / name)
    kept = [d for d in docs if d.reason is None]
    assert 0 < len(kept) < len(texts)
    assert [d.text for d in kept] == texts[: len(kept)]
    assert [(d.location, d.reason) for d in docs if d.reason] == [(name, "truncated_compressed_file")]


@pytest.mark.parametrize(
    ("name", "data"), [("e.jsonl", b""), ("e.jsonl.gz", gzip.compress(b"")), ("ws.jsonl", b"\n\n")]
)
def test_empty_file_is_counted_and_quarantined(tmp_path: Path, name: str, data: bytes) -> None:
    (tmp_path / name).write_bytes(data)
    docs, stats = _read(tmp_path / name)
    assert [(d.location, d.reason) for d in docs] == [(name, "empty_file")]
    assert stats["empty_files"] == 1


def test_id_field_is_carried_and_required(tmp_path: Path, paragraphs: list[str]) -> None:
    (tmp_path / "ids.jsonl").write_bytes(_jsonl([{"text": paragraphs[0], "doc": "a-1"}, {"text": paragraphs[1]}]))
    docs, _ = _read(tmp_path / "ids.jsonl", id_field="doc")
    assert docs[0].record_id == "a-1" and docs[0].reason is None
    assert docs[1].reason == "missing_id_field"


def test_a_code_records_path_field_gives_its_language(tmp_path: Path) -> None:
    records = [
        {"content": "def f():\n    return 1\n", "path": "src/pkg/util.py"},
        {"content": "int main(void) { return 0; }\n", "path": "C:\\proj\\main.c"},
        {"content": "x = 1\n", "path": "notes.unknown-ext"},
        {"content": "y = 2\n", "path": None},
        {"content": "z = 3\n"},
    ]
    (tmp_path / "code.jsonl").write_bytes(_jsonl(records))

    def languages(domain: str) -> list[str | None]:
        source = SourceConfig(
            name="t", domain=domain, format="jsonl", path=str(tmp_path), text_field="content", path_field="path"
        )  # type: ignore[arg-type]
        return [
            d.code_language
            for d in read_jsonl(str(tmp_path / "code.jsonl"), "code.jsonl", source, IngestConfig(), Counter())
        ]

    assert languages("code") == ["python", "c", None, None, None]
    assert languages("general") == [None] * 5  # a prose source's documents are not code, whatever their path


@pytest.mark.parametrize("compress", [False, True])
def test_a_50mb_line_is_quarantined_in_bounded_memory(tmp_path: Path, paragraphs: list[str], compress: bool) -> None:
    huge = " ".join(paragraphs)
    huge = huge * (50_000_000 // len(huge) + 1)
    name = "huge.jsonl.gz" if compress else "huge.jsonl"
    with gzip.open(tmp_path / name, "wt", compresslevel=1) if compress else open(tmp_path / name, "w") as out:
        out.write(json.dumps({"text": paragraphs[0]}) + "\n")
        out.write(json.dumps({"text": huge}) + "\n")
        out.write(json.dumps({"text": paragraphs[1]}) + "\n")
    del huge
    tracemalloc.start()
    try:
        docs, _ = _read(tmp_path / name, IngestConfig(preview_chars=500))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [(d.location, d.reason) for d in docs] == [
        (f"{name}:1", None),
        (f"{name}:2", "too_large"),
        (f"{name}:3", None),
    ]
    assert docs[1].text.startswith(json.dumps({"text": paragraphs[0][:50]})[:-2])
    assert peak < 15_000_000, f"peak {peak / 1e6:.1f} MB for a 50 MB record"
