"""Throughput of the PII stage against a naive regex set: email, IPv4 and digits-only phone and card patterns,
replaced without any validation (what a first attempt at PII scrubbing looks like).

Three numbers per run, all on one core (CPU seconds of this process): the pattern detectors alone, the whole
stage (patterns, the name/address tagger, overlap resolution, redaction, density drops, Arrow in and out), and
the baseline. Documents come from the demo corpus when it exists (JSONL, Parquet, text and code files under
data/demo), else from real text on this machine (licences, manual pages, CPython's CJK texts and stdlib code);
prose is cut into documents of about --chunk-chars characters. The tagger is fitted once before timing (or
loaded from --artifacts), with a small budget unless --full-fit is given.

    python benchmarks/bench_pii.py --max-docs 2000
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import gzip
import json
import re
import sysconfig
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import zstandard

from pretrain_core import schema as contract
from pretrain_core.pii.config import PiiConfig
from pretrain_core.pii.detectors import find_structured
from pretrain_core.pii.stage import TAGGER_ARTIFACT, PiiStage, fit_pii
from pretrain_core.pii.text_sources import read_text, sentence_language

REPO_ROOT = Path(__file__).resolve().parent.parent
DEMO = REPO_ROOT / "data" / "demo"
STDLIB = Path(sysconfig.get_paths()["stdlib"])
CODE_SUFFIXES = {".py": "python", ".c": "c", ".h": "c", ".js": "javascript", ".go": "go", ".rs": "rust", ".pl": "perl"}
NAIVE = [
    re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+"),  # email
    re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}\b"),  # IPv4
    re.compile(r"\+?\d[\d \-().]{7,}\d"),  # phone: any long digit run with separators
    re.compile(r"\b(?:\d[ -]?){13,19}\b"),  # card: 13-19 digits
]


def chunks(text: str, size: int) -> Iterator[str]:
    """Paragraph-aligned pieces of about ``size`` characters."""
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
    """(text, domain, code_language) from the demo corpus."""
    for path in sorted(DEMO.rglob("*")):
        if not path.is_file():
            continue
        top = path.relative_to(DEMO).parts[0]
        domain = top if top in contract.DOMAINS else "specialist"
        if path.name.endswith((".jsonl", ".jsonl.gz", ".jsonl.zst")):
            for line in _decompressed(path).splitlines():
                record = json.loads(line)
                if isinstance(record.get("text"), str):
                    yield record["text"], domain, None
        elif path.suffix == ".parquet":
            for text in pq.read_table(path, columns=["text"]).column("text").to_pylist():
                yield text, domain, None
        elif path.suffix in CODE_SUFFIXES:
            yield path.read_text(encoding="utf-8", errors="replace"), "code", CODE_SUFFIXES[path.suffix]
        elif path.suffix in {".txt", ".md"}:
            yield path.read_text(encoding="utf-8", errors="replace"), domain, None


def _decompressed(path: Path) -> str:
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
    for lang in ("", "de", "fr", "ja", "zh_CN"):
        for page in sorted((Path("/usr/share/man") / lang / "man1").glob("*.gz"))[:40]:
            yield read_text(str(page)) or "", "specialist", None
    for path in sorted(STDLIB.glob("*.py")):
        yield path.read_text(encoding="utf-8", errors="replace"), "code", "python"


def corpus(chunk_chars: int, max_docs: int, local: bool) -> pa.Table:
    """A DEDUP-schema table; the language comes from a cheap stop-word vote on each document's start."""
    use_demo = not local and DEMO.is_dir() and any(DEMO.iterdir())
    rows: list[dict[str, Any]] = []
    for text, domain, code_language in demo_documents() if use_demo else local_documents():
        for piece in [text] if domain == "code" else chunks(text, chunk_chars):
            if not piece.strip():
                continue
            lang = "und" if domain == "code" else sentence_language(piece[:2000]) or "und"
            rows.append(
                {
                    "id": f"doc-{len(rows)}",
                    "text": piece,
                    "source": "bench",
                    "domain": domain,
                    "location": f"bench:{len(rows)}",
                    "code_language": code_language,
                    "lang": lang,
                    "lang_score": 1.0,
                    "dup_cluster": f"doc-{len(rows)}",
                    "dup_cluster_size": 1,
                }
            )
    if max_docs and len(rows) > max_docs:  # evenly spread, so every source keeps its share
        rows = [rows[i * len(rows) // max_docs] for i in range(max_docs)]
    return pa.Table.from_pylist(rows, schema=contract.DEDUP)


def naive_redact(texts: list[str]) -> int:
    """The baseline: every regex match replaced, no validation, no context. Returns the number of matches."""
    matches = 0
    for text in texts:
        for pattern in NAIVE:
            text, found = pattern.subn("<PII>", text)
            matches += found
    return matches


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
    parser.add_argument("--max-docs", type=int, default=2000, help="documents to time (0 = all found)")
    parser.add_argument("--chunk-chars", type=int, default=3000, help="prose document size in characters")
    parser.add_argument("--local", action="store_true", help="use this machine's text even if the demo corpus exists")
    parser.add_argument("--repeat", type=int, default=1, help="runs per implementation; the best is reported")
    parser.add_argument("--artifacts", help="directory of an earlier fit_pii run to reuse instead of fitting")
    parser.add_argument("--full-fit", action="store_true", help="fit the tagger with the default budget")
    args = parser.parse_args()

    table = corpus(args.chunk_chars, args.max_docs, args.local)
    texts = table.column("text").to_pylist()
    megabytes = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    domains = table.column("domain").to_pylist()
    print(f"{len(texts)} documents, {megabytes:.2f} MB ({domains.count('code')} code), one core")

    budget = {} if args.full_fit else {"classifier_sentences_per_source": 600, "classifier_examples_per_language": 800}
    cfg = PiiConfig.model_validate(budget)
    if args.artifacts:
        artifacts = {TAGGER_ARTIFACT: str(Path(args.artifacts) / "pii_tagger.pkl")}
    else:
        started = time.process_time()
        artifacts = fit_pii(cfg, tempfile.mkdtemp(prefix="bench-pii-"))
        print(f"tagger fit: {time.process_time() - started:.1f} CPU s")
    stage = PiiStage(cfg, artifacts)
    stage.process(table.slice(0, 20))  # warm caches outside the timing

    structured = list(cfg.types)
    patterns = timed(lambda: [find_structured(t, structured, cfg.keep_private_ips) for t in texts], args.repeat)
    whole = timed(lambda: stage.process(table), args.repeat)
    base = timed(lambda: naive_redact(texts), args.repeat)
    output = stage.process(table)
    ours_matches = int(
        sum(output.kept.column("pii_count").to_pylist() + output.dropped.column("pii_count").to_pylist())
    )
    for name, seconds in (
        ("pii patterns only", patterns),
        ("pii stage (patterns + tagger)", whole),
        ("naive regex set", base),
    ):
        print(f"{name:32s} {len(texts) / seconds:9.1f} docs/s {megabytes / seconds:8.3f} MB/s")
    print(f"ratio vs naive: patterns {base / patterns:.2f}x, whole stage {base / whole:.2f}x (above 1: faster)")
    print(
        f"matches: ours {ours_matches} ({', '.join(f'{k}={int(v)}' for k, v in output.stats.items())}), "
        f"naive {naive_redact(texts)}; dropped {output.dropped.num_rows} documents"
    )


if __name__ == "__main__":
    main()
