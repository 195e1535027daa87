"""Throughput of the cleaning stage against the naive baseline: ftfy.fix_text + langdetect.detect per document.

Documents come from the demo corpus when it exists (text files, JSONL, code files under data/demo), else from
real text on this machine: OS licences, man pages (English and translations), CPython's CJK test texts, and
standard-library modules as code. Prose is cut into documents of about --chunk-chars characters at paragraph
boundaries, the size of a typical web page. Everything runs on one core; times are CPU seconds of this process.

    python benchmarks/bench_clean.py --max-docs 400
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import contextlib
import gzip
import json
import shutil
import subprocess
import sysconfig
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import ftfy
import langdetect
import pyarrow as pa
import pyarrow.parquet as pq
import zstandard
from langdetect.lang_detect_exception import LangDetectException

from pretrain_core import schema as contract
from pretrain_core.clean.config import CleanConfig
from pretrain_core.clean.stage import CleanStage

REPO_ROOT = Path(__file__).resolve().parent.parent
DEMO = REPO_ROOT / "data" / "demo"
STDLIB = Path(sysconfig.get_paths()["stdlib"])
CODE_SUFFIXES = {".py": "python", ".c": "c", ".h": "c", ".js": "javascript", ".go": "go", ".rs": "rust"}
MAN_PAGES = [(page, None) for page in ("bash", "tar", "grep", "find", "ssh", "git", "man", "ls", "cp", "perl")] + [
    (page, lang) for lang in ("de", "fr", "es", "ru", "zh_CN", "ja") for page in ("ls", "cp", "tar", "find")
]


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


def demo_documents() -> Iterator[tuple[str, str, str | None]]:
    """(text, domain, code_language) from the demo corpus: JSONL (.gz/.zst), Parquet, text and code files.

    The domain is the corpus's top-level folder when it names one, else "specialist" (man pages and the like).
    """
    for path in sorted(DEMO.rglob("*")):
        if not path.is_file():
            continue
        top = path.relative_to(DEMO).parts[0]
        domain = top if top in contract.DOMAINS else "specialist"
        name = path.name
        if name.endswith((".jsonl", ".jsonl.gz", ".jsonl.zst")):
            for line in _read_text(path).splitlines():
                record = json.loads(line)
                if isinstance(record.get("text"), str):
                    yield record["text"], domain, None
        elif name.endswith(".parquet"):
            for text in pq.read_table(path, columns=["text"]).column("text").to_pylist():
                yield text, domain, None
        elif path.suffix in CODE_SUFFIXES:
            yield path.read_text(encoding="utf-8", errors="replace"), "code", CODE_SUFFIXES[path.suffix]
        elif path.suffix in {".txt", ".md"}:
            yield path.read_text(encoding="utf-8", errors="replace"), domain, None


def _read_text(path: Path) -> str:
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    elif path.suffix == ".zst":
        data = zstandard.ZstdDecompressor().decompressobj().decompress(data)
    return data.decode("utf-8")


def local_documents() -> Iterator[tuple[str, str, str | None]]:
    """(text, domain, code_language) from real text installed on this machine."""
    for path in sorted(Path("/usr/share/common-licenses").glob("*")):
        if path.is_file():
            yield path.read_text(encoding="utf-8"), "general", None
    for path in sorted((STDLIB / "test" / "cjkencodings").glob("*-utf8.txt")):
        yield path.read_text(encoding="utf-8"), "general", None
    if shutil.which("man"):
        env = {**os.environ, "MANWIDTH": "80", "LANG": "C.UTF-8"}
        for page, lang in MAN_PAGES:
            target = str(Path("/usr/share/man") / lang / "man1" / f"{page}.1.gz") if lang else page
            if lang and not Path(target).is_file():
                continue
            command = ["man", "-l", target] if lang else ["man", target]
            try:
                result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60, check=False)
            except subprocess.TimeoutExpired:  # troff loops on a few CJK pages
                continue
            if result.stdout.strip():
                yield result.stdout, "specialist", None
    for path in sorted(STDLIB.glob("*.py")):
        yield path.read_text(encoding="utf-8", errors="replace"), "code", "python"


def corpus(chunk_chars: int, max_docs: int, local: bool = False) -> pa.Table:
    use_demo = not local and DEMO.is_dir() and any(DEMO.iterdir())
    source = demo_documents() if use_demo else local_documents()
    rows: list[dict[str, Any]] = []
    for text, domain, code_language in source:
        for piece in [text] if domain == "code" else chunks(text, chunk_chars):
            rows.append(
                {
                    "id": f"doc-{len(rows)}",
                    "text": piece,
                    "source": "bench",
                    "domain": domain,
                    "location": f"bench:{len(rows)}",
                    "code_language": code_language,
                }
            )
    if max_docs and len(rows) > max_docs:  # evenly spread, so every source keeps its share
        rows = [rows[i * len(rows) // max_docs] for i in range(max_docs)]
    return pa.Table.from_pylist(rows, schema=contract.INGEST)


def baseline(texts: list[str]) -> None:
    """What a first attempt does: fix everything with ftfy's defaults, detect on the whole text."""
    for text in texts:
        fixed = ftfy.fix_text(text)
        with contextlib.suppress(LangDetectException):  # no features: the caller would record "unknown"
            langdetect.detect(fixed)


def timed(run: Callable[[], object], repeat: int) -> float:
    """Best CPU seconds of this process over ``repeat`` runs: per-core cost, unaffected by other load."""
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        run()
        best = min(best, time.process_time() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-docs", type=int, default=400, help="documents to time (0 = all found)")
    parser.add_argument("--chunk-chars", type=int, default=3000, help="prose document size (0 = whole files)")
    parser.add_argument("--local", action="store_true", help="use this machine's text even if the demo corpus exists")
    parser.add_argument("--repeat", type=int, default=1, help="runs per implementation; the best is reported")
    args = parser.parse_args()

    table = corpus(args.chunk_chars, args.max_docs, args.local)
    texts = table.column("text").to_pylist()
    megabytes = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    domains = table.column("domain").to_pylist()
    print(f"{len(texts)} documents, {megabytes:.2f} MB ({domains.count('code')} code), one core")

    stage = CleanStage(CleanConfig())
    stage.process(table.slice(0, 20))  # load langdetect profiles outside the timing
    langdetect.DetectorFactory.seed = 0
    baseline(texts[:1])

    ours = timed(lambda: stage.process(table), args.repeat)
    base = timed(lambda: baseline(texts), args.repeat)
    output = stage.process(table)
    for name, seconds in (("clean stage", ours), ("ftfy.fix_text + langdetect.detect", base)):
        print(f"{name:36s} {len(texts) / seconds:9.1f} docs/s {megabytes / seconds:8.3f} MB/s")
    print(f"speed-up: {base / ours:.2f}x  (kept {output.kept.num_rows}, dropped {output.dropped.num_rows})")


if __name__ == "__main__":
    main()
