"""Throughput of MinHash signatures + LSH indexing: ours against datasketch's per-document loop.

Ours: normalise, hash every shingle of a batch in numpy, compute all signatures as one vectorised product,
index them in datasketch's MinHashLSH and read its buckets. Baseline, what the datasketch docs show: per
document ``MinHash(num_perm)``, ``update`` per shingle with the default SHA-1, then ``MinHashLSH.insert``;
same normalisation and the same word 5-gram shingles. Also times our whole ``fit_dedup`` (exact keys,
verification, clustering, artifact) for reference.

Documents come from the demo corpus when it exists (Parquet/JSONL(.gz/.zst) text fields, text and code files
under data/demo), else from real text on this machine (licences, man pages, vim tutors in 40 languages,
standard-library modules), cut into pieces of about --chunk-chars characters; one document in ten gets a
reworded copy so the index has duplicates to find. Everything runs on one core.

    python benchmarks/bench_dedup.py --max-docs 2000
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import gzip
import json
import random
import sysconfig
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import zstandard
from datasketch import MinHash, MinHashLSH

from pretrain_core import schema as contract
from pretrain_core import storage
from pretrain_core.dedup.candidates import candidate_pairs
from pretrain_core.dedup.config import DedupConfig
from pretrain_core.dedup.minhash import lsh_buckets, minhash_signatures
from pretrain_core.dedup.normalize import normalize_text
from pretrain_core.dedup.shingles import shingle_sets
from pretrain_core.dedup.stage import fit_dedup

REPO_ROOT = Path(__file__).resolve().parent.parent
DEMO = REPO_ROOT / "data" / "demo"
STDLIB = Path(sysconfig.get_paths()["stdlib"])
TEXT_SUFFIXES = {".txt", ".md", ".py", ".c", ".h", ".js", ".sh", ".pl", ".pm", ".go", ".rs", ".java"}


def demo_texts() -> Iterator[str]:
    for path in sorted(DEMO.rglob("*")):
        name = path.name
        if not path.is_file():
            continue
        if name.endswith(".parquet"):
            table = pq.read_table(path)
            if "text" in table.column_names:
                yield from (t for t in table.column("text").to_pylist() if isinstance(t, str))
        elif name.endswith((".jsonl", ".jsonl.gz", ".jsonl.zst")):
            opener: Callable[..., Any] = open
            if name.endswith(".gz"):
                opener = gzip.open
            elif name.endswith(".zst"):
                opener = zstandard.open
            with opener(path, "rt", encoding="utf-8") as lines:
                for line in lines:
                    text = json.loads(line).get("text")
                    if isinstance(text, str):
                        yield text
        elif path.suffix in TEXT_SUFFIXES:
            yield path.read_text(encoding="utf-8", errors="replace")


def local_texts() -> Iterator[str]:
    for path in sorted(Path("/usr/share/common-licenses").glob("*")):
        yield path.read_text(encoding="utf-8")
    for path in sorted(Path("/usr/share/vim/vim90/tutor").glob("tutor.*utf-8")):
        yield path.read_text(encoding="utf-8")
    for path in sorted(Path("/usr/share/man/man1").glob("*.1.gz"))[:400]:
        with gzip.open(path, "rt", encoding="utf-8", errors="replace") as handle:
            yield handle.read()
    for path in sorted(STDLIB.glob("*.py")):
        yield path.read_text(encoding="utf-8", errors="replace")


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


def reworded(text: str, rng: random.Random) -> str:
    """A copy with about 5% of its words rewritten in runs of 8, as between two crawls of one page."""
    words = text.split()
    for _ in range(max(1, len(words) // 160)):
        at = rng.randrange(max(1, len(words) - 8))
        words[at : at + 8] = [w[::-1] for w in words[at : at + 8]]
    return " ".join(words)


def corpus(chunk_chars: int, max_docs: int) -> list[str]:
    source = demo_texts() if DEMO.is_dir() and any(DEMO.iterdir()) else local_texts()
    texts = [piece for text in source for piece in chunks(text, chunk_chars) if piece.strip()]
    step = max(1, len(texts) // max_docs) if max_docs else 1
    texts = texts[::step][: max_docs or None]
    rng = random.Random(0)
    return texts + [reworded(t, rng) for t in texts[::10]]


def ours(texts: list[str], cfg: DedupConfig) -> tuple[int, tuple[int, int]]:
    """Candidate pairs found and the (bands, rows) datasketch chose."""
    sets = shingle_sets([normalize_text(t) for t in texts], "word", cfg.word_ngram, cfg.char_ngram, 0.0)
    signatures = minhash_signatures(sets, cfg.num_perm, cfg.seed)
    docs = np.flatnonzero(sets.sizes > 0)
    buckets, params = lsh_buckets(signatures, docs, cfg.seed, cfg.threshold, cfg.lsh_false_negative_weight, None)
    return len(candidate_pairs(buckets, np.arange(len(texts)), cfg.full_pairs_limit)), params


def baseline(texts: list[str], cfg: DedupConfig, params: tuple[int, int]) -> None:
    """The same shingles, one SHA-1 and one numpy update per shingle, one LSH insert per document."""
    lsh = MinHashLSH(threshold=cfg.threshold, num_perm=cfg.num_perm, params=params)
    for key, text in enumerate(texts):
        words = normalize_text(text).split()
        minhash = MinHash(num_perm=cfg.num_perm, seed=cfg.seed)
        for i in range(max(len(words) - cfg.word_ngram + 1, 1)):
            minhash.update(" ".join(words[i : i + cfg.word_ngram]).encode("utf-8"))
        lsh.insert(key, minhash)


def full_fit(texts: list[str], cfg: DedupConfig, workdir: Path) -> dict[str, Any]:
    rows = [
        {
            "id": f"doc-{i:06d}",
            "text": t,
            "source": "bench",
            "domain": "general",
            "location": f"bench:{i}",
            "code_language": None,
            "lang": "und",
            "lang_score": 0.0,
        }
        for i, t in enumerate(texts)
    ]
    url = str(workdir / "clean" / "part-00000.parquet")
    storage.write_parquet(url, pa.Table.from_pylist(rows, schema=contract.CLEAN))
    artifacts = fit_dedup([url], cfg, str(workdir / "artifacts"))
    summary: dict[str, Any] = storage.read_json(artifacts["summary"])
    return summary


def timed(run: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-docs", type=int, default=1000, help="documents before reworded copies (0 = all)")
    parser.add_argument("--chunk-chars", type=int, default=3000, help="document size in characters")
    parser.add_argument("--num-perm", type=int, default=128, help="MinHash permutations")
    parser.add_argument("--repeat", type=int, default=1, help="runs per implementation; the best is reported")
    args = parser.parse_args()

    cfg = DedupConfig(num_perm=args.num_perm)
    texts = corpus(args.chunk_chars, args.max_docs)
    megabytes = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    print(f"{len(texts)} documents, {megabytes:.2f} MB, num_perm={cfg.num_perm}, word {cfg.word_ngram}-grams, one core")

    _, params = ours(texts[:10], cfg)  # the same bands and rows for both; their optimisation is not timed
    ours_seconds = timed(lambda: ours(texts, cfg), args.repeat)
    pairs, _ = ours(texts, cfg)
    base_seconds = timed(lambda: baseline(texts, cfg, params), args.repeat)
    with tempfile.TemporaryDirectory() as workdir:
        started = time.perf_counter()
        summary = full_fit(texts, cfg, Path(workdir))
        fit_seconds = time.perf_counter() - started
    for name, seconds in (
        ("ours: numpy signatures + MinHashLSH", ours_seconds),
        ("datasketch: MinHash.update(sha1) loop + insert", base_seconds),
        ("ours: whole fit_dedup", fit_seconds),
    ):
        print(f"{name:48s} {len(texts) / seconds:9.1f} docs/s {megabytes / seconds:8.3f} MB/s")
    print(f"speed-up (signatures + LSH, bands x rows = {params[0]} x {params[1]}): {base_seconds / ours_seconds:.1f}x")
    print(
        f"LSH candidate pairs: {pairs}; fit found {summary['exact_duplicates']} exact and "
        f"{summary['near_duplicates']} near duplicates ({summary['verified_pairs']} pairs verified)"
    )


if __name__ == "__main__":
    main()
