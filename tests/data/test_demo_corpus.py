"""The bundled demo corpus: every source listed exists, covers every domain and format, holds Chinese and other
scripts, stays small enough for git and for a minutes-long run, and is documented in SOURCES.md."""

from __future__ import annotations

import gzip
import html
import json
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
import zstandard
from warcio.archiveiterator import ArchiveIterator

from pretrain_core.ingest.config import SourceConfig

REPO_ROOT = Path(__file__).resolve().parents[2]
DEMO = REPO_ROOT / "pretrain_core" / "data" / "demo"
MAX_DISK_BYTES = 6_000_000  # what the repository carries
MIN_DISK_BYTES = 2_000_000

# Units of text per writing system: a Han or kana character is about a word, Latin and Cyrillic count words.
SCRIPT_UNITS = {
    "han": re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]"),
    "kana": re.compile(r"[\u3040-\u30ff]"),
    "cyrillic": re.compile(r"[\u0400-\u04ff]+"),
    "latin": re.compile(r"[A-Za-z\u00c0-\u024f]+"),
}
SCRIPT_SAMPLE_CHARS = 5_000  # a document's opening is enough to tell its script
HTML_MARKUP = re.compile(r"(?is)<(script|style)\b.*?</\1>|<[^>]+>")


def load_sources() -> list[SourceConfig]:
    entries = yaml.safe_load((DEMO / "sources.yaml").read_text(encoding="utf-8"))
    return [SourceConfig.model_validate(entry) for entry in entries]


def dominant_script(text: str) -> str | None:
    """The writing system most of a document's opening is in; Japanese ('kana') mixes kana with Han characters."""
    sample = text[:SCRIPT_SAMPLE_CHARS]
    units = Counter({script: len(pattern.findall(sample)) for script, pattern in SCRIPT_UNITS.items()})
    cjk = units.pop("han") + units.pop("kana")
    kana_share = len(SCRIPT_UNITS["kana"].findall(sample)) / cjk if cjk else 0.0
    units["kana" if kana_share >= 0.2 else "han"] = cjk
    script, count = units.most_common(1)[0]
    return script if count else None


def jsonl_records(path: Path) -> list[dict[str, object]]:
    raw = path.read_bytes()
    data = (
        gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else zstandard.ZstdDecompressor().decompressobj().decompress(raw)
    )
    return [json.loads(line) for line in data.decode("utf-8").splitlines()]


def source_texts(source: SourceConfig) -> Iterator[str]:
    """Every document text of a source, read with plain libraries (independent of the pipeline's readers)."""
    path = DEMO / source.path
    if source.format == "jsonl":
        yield from (str(record[source.text_field]) for record in jsonl_records(path))
    elif source.format == "parquet":
        yield from pq.read_table(path, columns=[source.text_field]).column(source.text_field).to_pylist()
    elif source.format in ("text", "code"):
        for file in sorted(p for p in path.rglob("*") if p.is_file()):
            yield file.read_bytes().decode("utf-8", errors="replace")
    elif source.format == "warc":
        with path.open("rb") as handle:
            for record in ArchiveIterator(handle):
                content_type = record.http_headers.get_header("Content-Type", "") if record.http_headers else ""
                if record.rec_type == "response" and content_type.startswith("text/html"):
                    yield html.unescape(HTML_MARKUP.sub(" ", record.content_stream().read().decode("utf-8")))
    else:
        raise AssertionError(f"unexpected format {source.format}")


@pytest.fixture(scope="module")
def sources() -> list[SourceConfig]:
    return load_sources()


@pytest.fixture(scope="module")
def texts(sources: list[SourceConfig]) -> dict[str, list[str]]:
    return {source.name: list(source_texts(source)) for source in sources}


@pytest.fixture(scope="module")
def scripts(texts: dict[str, list[str]]) -> dict[str, Counter[str | None]]:
    """Per source, how many documents are mostly in each script."""
    return {name: Counter(dominant_script(doc) for doc in docs) for name, docs in texts.items()}


def test_every_listed_source_exists_and_is_unique(sources: list[SourceConfig]) -> None:
    names = [s.name for s in sources]
    assert len(names) == len(set(names))
    for source in sources:
        path = DEMO / source.path
        assert path.exists(), source.path
        assert path.is_dir() == (source.format in ("text", "code")), source.path


def test_every_domain_and_format_is_present(sources: list[SourceConfig]) -> None:
    assert {s.domain for s in sources} == {"general", "specialist", "code"}
    assert {"jsonl", "parquet", "text", "code", "warc"} <= {s.format for s in sources}
    jsonl_paths = [s.path for s in sources if s.format == "jsonl"]
    assert any(p.endswith(".jsonl.gz") for p in jsonl_paths)
    assert any(p.endswith(".jsonl.zst") for p in jsonl_paths)
    general_jsonl = [s for s in sources if s.domain == "general" and s.path.endswith(".jsonl.gz")]
    assert general_jsonl, "general prose must come as gzipped JSONL"


def test_chinese_and_other_scripts_are_present(scripts: dict[str, Counter[str | None]]) -> None:
    total = sum(scripts.values(), Counter())
    assert total["han"] >= 300, total
    assert total["latin"] >= 1000, total
    assert total["cyrillic"] >= 20, total
    assert total["kana"] >= 20, total


def test_general_jsonl_holds_chinese_and_other_languages(
    sources: list[SourceConfig], scripts: dict[str, Counter[str | None]]
) -> None:
    general = sum((scripts[s.name] for s in sources if s.domain == "general" and s.format == "jsonl"), Counter())
    assert general["han"] >= 100 and general["latin"] >= 100, general


def test_corpus_size_suits_git_and_a_short_run(texts: dict[str, list[str]]) -> None:
    disk = sum(p.stat().st_size for p in DEMO.rglob("*") if p.is_file())
    assert MIN_DISK_BYTES <= disk <= MAX_DISK_BYTES, disk
    documents = sum(len(docs) for docs in texts.values())
    assert 2_000 <= documents <= 10_000, documents
    text_bytes = sum(len(doc.encode("utf-8")) for docs in texts.values() for doc in docs)
    assert 5_000_000 <= text_bytes <= 20_000_000, text_bytes
    largest = max(len(doc.encode("utf-8")) for docs in texts.values() for doc in docs)
    assert largest < 200_000, "split books and manuals into chapters: no single huge document"


def test_sources_md_documents_every_source(sources: list[SourceConfig]) -> None:
    sources_md = (DEMO / "SOURCES.md").read_text(encoding="utf-8")
    for source in sources:
        section = sources_md.split(f"## {source.name}\n", 1)
        assert len(section) == 2, f"no section for {source.name}"
        body = section[1].split("\n## ", 1)[0]
        assert "- Licence: " in body and "- Debian packages: " in body and "- How the sample was made: " in body


def test_code_tree_holds_what_a_code_reader_must_skip(sources: list[SourceConfig]) -> None:
    (code,) = [s for s in sources if s.format == "code"]
    files = [p for p in (DEMO / code.path).rglob("*") if p.is_file()]
    parts = {part for p in files for part in p.parts}
    assert parts & {"node_modules", "vendor"}
    headers = {p: p.read_bytes()[:2000].lower() for p in files}
    assert any(p.name.endswith("_pb2.py") and b"do not edit" in head for p, head in headers.items())

    def is_binary(data: bytes) -> bool:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return True
        return b"\x00" in data

    assert any(is_binary(p.read_bytes()) for p in files)


def test_warc_records_are_http_responses_with_urls(sources: list[SourceConfig]) -> None:
    (warc,) = [s for s in sources if s.format == "warc"]
    with (DEMO / warc.path).open("rb") as handle:
        records = [
            (r.rec_type, r.rec_headers.get_header("WARC-Target-URI"), r.http_headers) for r in ArchiveIterator(handle)
        ]
    responses = [(uri, http) for kind, uri, http in records if kind == "response"]
    assert len(responses) >= 50
    for uri, http in responses:
        assert uri.startswith("https://")
        assert http.get_statuscode() == "200"
        assert int(http.get_header("Content-Length")) > 0


def test_gzip_members_carry_no_timestamp(sources: list[SourceConfig]) -> None:
    for source in sources:
        if source.path.endswith(".gz"):
            header = (DEMO / source.path).read_bytes()[:10]
            assert header[:2] == b"\x1f\x8b"
            assert header[4:8] == b"\x00\x00\x00\x00", f"{source.path}: gzip mtime set, bytes not reproducible"


def test_build_script_documents_itself() -> None:
    result = subprocess.run(
        [sys.executable, str(REPO_ROOT / "scripts" / "build_demo_corpus.py"), "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "apt-get install" in result.stdout and "--check" in result.stdout


def test_jsonl_records_have_text_and_ids(sources: list[SourceConfig]) -> None:
    for source in sources:
        if source.format != "jsonl":
            continue
        records = jsonl_records(DEMO / source.path)
        ids = [r[source.id_field] for r in records] if source.id_field else []
        assert len(ids) == len(set(ids)), f"{source.name}: duplicate ids"
        assert all(isinstance(text := r[source.text_field], str) and text.strip() for r in records)
