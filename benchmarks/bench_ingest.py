"""Ingestion throughput, single-threaded: JSONL.gz reading and WARC HTML extraction, ours against a baseline.

JSONL.gz: our stage path (`ingest_files`: streaming read, ids, limits, Arrow tables) against
`pandas.read_json(lines=True)` on the same file. WARC: our stage path against a bare loop of warcio +
`trafilatura.extract`, which shows what our bookkeeping costs on top of extraction itself. Inputs come from the demo
corpus when present (pretrain_core/data/demo; --synthetic ignores it), else from real text here (Debian license texts,
Python's reference documentation and stdlib modules rendered by pydoc).

    python benchmarks/bench_ingest.py --docs 20000 --pages 300
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import gzip
import html
import io
import json
import pydoc
import pydoc_data.topics
import tempfile
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pyarrow as pa
import trafilatura
from corpus import DEMO
from timing import Rate, cpu_time, print_rates
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from pretrain_core.ingest.config import IngestConfig, SourceConfig
from pretrain_core.ingest.stage import ingest_files

LICENCES = Path(__file__).resolve().parent.parent / "data" / "reference" / "licences"
MODULES = ("json", "textwrap", "string", "argparse", "csv", "difflib", "heapq", "shlex", "fractions", "calendar")


def real_paragraphs() -> list[str]:
    """Prose paragraphs: the licence texts the repo ships and the Python language reference topics."""
    texts = [p.read_text(encoding="utf-8") for p in sorted(LICENCES.glob("*")) if p.is_file()]
    texts += list(pydoc_data.topics.topics.values())
    return [p.strip() for t in texts for p in t.split("\n\n") if len(p.strip()) > 40]


def jsonl_input(workdir: Path, docs: int, demo_dir: Path | None) -> Path:
    """The largest demo JSONL.gz file, or one of `docs` documents of several paragraphs each from real text."""
    demo = sorted(demo_dir.rglob("*.jsonl.gz"), key=lambda p: p.stat().st_size) if demo_dir else []
    if demo:
        return demo[-1]
    paragraphs = real_paragraphs()
    path = workdir / "bench.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=6) as out:
        for i in range(docs):
            body = "\n\n".join(paragraphs[(i * 7 + k) % len(paragraphs)] for k in range(4))
            out.write(json.dumps({"text": body, "n": i}, ensure_ascii=False) + "\n")
    return path


def html_pages() -> list[bytes]:
    """Real HTML: stdlib modules rendered by pydoc, and reference topics wrapped in a page with boilerplate."""
    doc = pydoc.HTMLDoc()
    pages = [doc.page(name, doc.docmodule(__import__(name))).encode() for name in MODULES]
    nav = "<nav><a href='/'>Home</a> <a href='/docs'>Docs</a> <a href='/blog'>Blog</a></nav>"
    for _, text in sorted(pydoc_data.topics.topics.items()):
        paragraphs = "".join(f"<p>{html.escape(p)}</p>" for p in text.split("\n\n"))
        pages.append(
            f"<html><body>{nav}<article>{paragraphs}</article><footer>(c) Example</footer></body></html>".encode()
        )
    return pages


def warc_input(workdir: Path, pages: int, demo_dir: Path | None) -> Path:
    """A demo WARC file, or one of `pages` HTML responses built from `html_pages`."""
    demo = sorted(demo_dir.rglob("*.warc.gz")) if demo_dir else []
    if demo:
        return demo[0]
    bodies = html_pages()
    path = workdir / "bench.warc.gz"
    with open(path, "wb") as out:
        writer = WARCWriter(out, gzip=True)
        for i in range(pages):
            headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1")
            body = io.BytesIO(bodies[i % len(bodies)])
            writer.write_record(
                writer.create_warc_record(f"https://bench.example/{i}", "response", payload=body, http_headers=headers)
            )
    return path


def measure(name: str, run: Callable[[], tuple[int, int]], repeat: int) -> Rate:
    """Best CPU time of `run` over `repeat` runs, with the (documents, bytes) it reports."""
    seconds, (docs, size) = cpu_time(run, repeat)
    return Rate(name, seconds, docs, size / 1e6)


def bench_jsonl(path: Path, repeat: int) -> None:
    raw_bytes = len(gzip.decompress(path.read_bytes()))
    source = SourceConfig(name="bench", domain="general", format="jsonl", path=str(path.parent))

    def ours() -> tuple[int, int]:
        output, _, _ = ingest_files([str(path)], source, IngestConfig())
        return output.kept.num_rows, raw_bytes

    def pandas_baseline() -> tuple[int, int]:
        frame = pd.read_json(path, lines=True, compression="gzip")
        return len(frame), raw_bytes

    baseline = measure("pandas.read_json(lines=True)", pandas_baseline, repeat)
    rates = [measure("ours: ingest_files", ours, repeat), baseline]
    print_rates(f"JSONL.gz reading: {path.name} ({raw_bytes / 1e6:.1f} MB uncompressed)", rates, baseline)


def bench_warc(path: Path, repeat: int) -> None:
    source = SourceConfig(name="bench", domain="general", format="warc", path=str(path.parent))
    with open(path, "rb") as handle:
        size = sum(len(r.content_stream().read()) for r in ArchiveIterator(handle) if r.rec_type == "response")

    def ours(cfg: IngestConfig) -> Callable[[], tuple[int, int]]:
        def run() -> tuple[int, int]:
            output, _, _ = ingest_files([str(path)], source, cfg)
            return output.kept.num_rows, size

        return run

    def bare() -> tuple[int, int]:
        docs = 0
        with open(path, "rb") as handle:
            for record in ArchiveIterator(handle):
                if record.rec_type == "response":
                    docs += bool(trafilatura.extract(record.content_stream().read(), include_comments=False))
        return docs, size

    baseline = measure("warcio + trafilatura.extract loop", bare, repeat)
    rates = [
        measure("ours: ingest_files", ours(IngestConfig()), repeat),
        measure("ours: ingest_files, html_fast=true", ours(IngestConfig(html_fast=True)), repeat),
        baseline,
    ]
    print_rates(f"WARC HTML extraction: {path.name} ({size / 1e6:.1f} MB of HTML)", rates, baseline)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=20_000, help="documents in the generated JSONL.gz file")
    parser.add_argument("--pages", type=int, default=300, help="HTML pages in the generated WARC file")
    parser.add_argument("--repeat", type=int, default=2, help="runs per measurement; the best is reported")
    parser.add_argument("--synthetic", action="store_true", help="generate inputs even when the demo corpus exists")
    args = parser.parse_args(argv)
    pa.set_cpu_count(1)
    pa.set_io_thread_count(1)
    print("one core, CPU seconds; MB/s counts uncompressed JSON lines (JSONL) or HTML bodies (WARC)")
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as tmp:
        demo = None if args.synthetic else DEMO
        bench_jsonl(jsonl_input(Path(tmp), args.docs, demo), args.repeat)
        bench_warc(warc_input(Path(tmp), args.pages, demo), args.repeat)


if __name__ == "__main__":
    main()
