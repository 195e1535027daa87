"""The documents every stage benchmark times, loaded, cut and sampled one way so that figures compare across stages.

The demo corpus is read by the pipeline's own ingestion (data/demo/sources.yaml), so a benchmark sees the text the
stage sees in a real run. Without the corpus (or with ``local=True``) the documents are real text installed on this
machine instead: OS licences, CPython's CJK test texts, manual pages in several languages and stdlib modules.
"""

from __future__ import annotations

import sysconfig
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import pyarrow as pa
import yaml

from pretrain_core.ingest.config import IngestConfig, SourceConfig
from pretrain_core.ingest.listing import list_source_files
from pretrain_core.ingest.stage import ingest_files
from pretrain_eval.pii_tagger.text_sources import read_text

REPO_ROOT = Path(__file__).resolve().parent.parent
DEMO = REPO_ROOT / "data" / "demo"
STDLIB = Path(sysconfig.get_paths()["stdlib"])
MAN_LANGUAGES = ("", "de", "fr", "es", "ru", "ja", "zh_CN")  # "" is English
MAN_PAGES_PER_LANGUAGE = 40

T = TypeVar("T")


class Document(NamedTuple):
    text: str
    domain: str
    code_language: str | None


def demo_documents() -> list[Document]:
    """The demo corpus's kept documents, as ingest hands them on; empty when the corpus is absent."""
    listing = DEMO / "sources.yaml"
    docs: list[Document] = []
    for entry in yaml.safe_load(listing.read_text(encoding="utf-8")) if listing.is_file() else []:
        source = SourceConfig.model_validate({**entry, "path": str(REPO_ROOT / entry["path"])})
        try:
            files = list_source_files(source)
        except FileNotFoundError:
            continue
        kept = ingest_files([f.url for f in files], source, IngestConfig())[0].kept
        columns = (kept[name].to_pylist() for name in ("text", "domain", "code_language"))
        docs += [Document(*row) for row in zip(*columns, strict=True)]
    return docs


def local_documents() -> list[Document]:
    """Real text installed on this machine, whole files (troff markup of manual pages removed)."""
    docs = [
        Document(path.read_text(encoding="utf-8", errors="replace"), "general", None)
        for path in [
            *sorted(Path("/usr/share/common-licenses").glob("*")),
            *sorted(STDLIB.glob("test/cjkencodings/*-utf8.txt")),
        ]
        if path.is_file()
    ]
    for lang in MAN_LANGUAGES:
        for page in sorted((Path("/usr/share/man") / lang / "man1").glob("*.gz"))[:MAN_PAGES_PER_LANGUAGE]:
            text = read_text(str(page))
            if text:
                docs.append(Document(text, "specialist", None))
    docs += [
        Document(p.read_text(encoding="utf-8", errors="replace"), "code", "python") for p in sorted(STDLIB.glob("*.py"))
    ]
    return docs


def load_documents(local: bool = False) -> tuple[list[Document], str]:
    """The demo corpus unless ``local`` or absent, else this machine's text; with a phrase naming the origin."""
    docs = [] if local else demo_documents()
    if docs:
        return docs, f"demo corpus ({DEMO.relative_to(REPO_ROOT)}, read by ingest)"
    return local_documents(), "text installed on this machine (licences, CJK texts, man pages, stdlib)"


def chunks(text: str, size: int) -> Iterator[str]:
    """Paragraph-aligned pieces of about ``size`` characters (the whole text when size is 0)."""
    if size <= 0 or len(text) <= size:
        yield text
        return
    piece: list[str] = []
    length = 0
    for paragraph in text.split("\n\n"):
        piece.append(paragraph)
        length += len(paragraph) + 2
        if length >= size:
            yield "\n\n".join(piece)
            piece, length = [], 0
    if piece:
        yield "\n\n".join(piece)


def pages(docs: Iterable[Document], chunk_chars: int) -> list[Document]:
    """Prose cut into web-page-sized documents; code kept whole, since one source file is one document."""
    return [
        Document(piece, doc.domain, doc.code_language)
        for doc in docs
        for piece in ([doc.text] if doc.domain == "code" else chunks(doc.text, chunk_chars))
        if piece.strip()
    ]


def spread(items: Sequence[T], limit: int) -> list[T]:
    """Up to ``limit`` items taken evenly across the sequence (all when 0), so every source keeps its share."""
    if not limit or len(items) <= limit:
        return list(items)
    return [items[i * len(items) // limit] for i in range(limit)]


def megabytes(texts: Iterable[str]) -> float:
    """UTF-8 size in MB, the unit of every MB/s figure."""
    return sum(len(text.encode("utf-8")) for text in texts) / 1e6


def stage_table(docs: Sequence[Document], schema: pa.Schema, **columns: list[Any]) -> pa.Table:
    """The documents as the stage before the benchmarked one hands them on, columns it would have computed filled
    with neutral values (unique, unscored, no PII) unless given in ``columns``."""
    n = len(docs)
    ids = [f"doc-{i:07d}" for i in range(n)]
    neutral: dict[str, list[Any]] = {
        "id": ids,
        "text": [doc.text for doc in docs],
        "source": ["bench"] * n,
        "domain": [doc.domain for doc in docs],
        "location": [f"bench:{i}" for i in range(n)],
        "code_language": [doc.code_language for doc in docs],
        "lang": ["und"] * n,
        "lang_score": [1.0] * n,
        "dup_cluster": ids,
        "dup_cluster_size": [1] * n,
        "pii_count": [0] * n,
        "pii_types": [[] for _ in range(n)],
        "perplexity": [100.0] * n,
        "quality_bucket": ["head"] * n,
    }
    return pa.table({name: columns.get(name, neutral[name]) for name in schema.names}, schema=schema)
