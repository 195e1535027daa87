"""The documents every stage benchmark times, loaded, cut and sampled one way so that figures compare across stages.

The demo corpus is read by the pipeline's own ingestion (pretrain_core/data/demo/sources.yaml), so a benchmark sees the
text the stage sees in a real run. With ``reference=True`` the documents are the other real text the repo ships instead
(data/reference: licences, CPython's CJK test texts, Vim tutors, coreutils manual pages) and stdlib modules; never the
text installed on the machine, so figures compare across machines.
"""

from __future__ import annotations

import sysconfig
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import pyarrow as pa

from pretrain_core.config import load_config
from pretrain_core.ingest.config import IngestConfig
from pretrain_core.ingest.listing import list_source_files
from pretrain_core.ingest.stage import ingest_files
from pretrain_core.licences import NOASSERTION
from pretrain_eval.pii_tagger.text_sources import read_text

REPO_ROOT = Path(__file__).resolve().parent.parent
DEMO = REPO_ROOT / "pretrain_core" / "data" / "demo"
STDLIB = Path(sysconfig.get_paths()["stdlib"])
REFERENCE = REPO_ROOT / "data" / "reference"

T = TypeVar("T")


class Document(NamedTuple):
    text: str
    domain: str
    code_language: str | None


def demo_documents() -> list[Document]:
    """The demo corpus's kept documents, as ingest hands them on; empty when the corpus is absent."""
    return [doc for _, doc in demo_documents_by_source()]


def demo_documents_by_source() -> list[tuple[str, Document]]:
    """The demo corpus's kept documents with the name of the source each comes from, in source order."""
    docs: list[tuple[str, Document]] = []
    for source in load_config().sources:
        try:
            files = list_source_files(source)
        except FileNotFoundError:
            continue
        kept = ingest_files([f.url for f in files], source, IngestConfig())[0].kept
        columns = (kept[name].to_pylist() for name in ("text", "domain", "code_language"))
        docs += [(source.name, Document(*row)) for row in zip(*columns, strict=True)]
    return docs


def reference_documents() -> list[Document]:
    """The repo's reference text (data/reference), whole files (troff markup of manual pages removed)."""
    general = [*sorted((REFERENCE / "licences").glob("*")), *sorted((REFERENCE / "cjkencodings").glob("*"))]
    general += sorted((REFERENCE / "vim-tutor").glob("*"))
    docs = [Document(p.read_text(encoding="utf-8", errors="replace"), "general", None) for p in general if p.is_file()]
    for page in sorted((REFERENCE / "coreutils-man1").glob("*.gz")):
        text = read_text(str(page))
        if text:
            docs.append(Document(text, "specialist", None))
    docs += [
        Document(p.read_text(encoding="utf-8", errors="replace"), "code", "python") for p in sorted(STDLIB.glob("*.py"))
    ]
    return docs


def load_documents(reference: bool = False) -> tuple[list[Document], str]:
    """The demo corpus, or with ``reference`` the repo's reference text; with a phrase naming the origin."""
    if reference:
        return reference_documents(), "reference text (data/reference: licences, CJK texts, tutors, man pages; stdlib)"
    docs = demo_documents()
    if not docs:
        raise FileNotFoundError(f"no demo corpus under {DEMO}")
    return docs, f"demo corpus ({DEMO.relative_to(REPO_ROOT)}, read by ingest)"


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
        "licence": [NOASSERTION] * n,
        "location": [f"bench:{i}" for i in range(n)],
        "code_language": [doc.code_language for doc in docs],
        "lang": ["und"] * n,
        "lang_score": [1.0] * n,
        "dup_cluster": ids,
        "dup_cluster_size": [1] * n,
        "pii_count": [0] * n,
        "pii_types": [[] for _ in range(n)],
        "perplexity": [100.0] * n,
        "quality_signals": [None] * n,
        "quality_classifier": [0.5] * n,
        "quality_score": [0.5] * n,
        "quality_bucket": ["head"] * n,
    }
    return pa.table({name: columns.get(name, neutral[name]) for name in schema.names}, schema=schema)
