"""Throughput of near-dup sketching, and of MinHash signatures + LSH indexing: ours against datasketch's per-document
loop.

Sketching (what the fit's map does per shard): normalise, shingle and sign a batch in compiled kernels
(pretrain_core/dedup/kernels.py), from the Arrow string array the stage reads and, for comparison, from Python
strings; against datasketch's `MinHash.update_batch` per document on the same shingles after the same
normalisation done with regular expressions; timed on all documents and on the ASCII-only ones (English prose and
code, one word shingle per word). Word shingles everywhere (what the baseline makes), plus one row with the stage's
default `shingle: auto` (character shingles for Chinese and Japanese: more shingles per document).

MinHash + LSH: ours also bands the signatures in numpy into the buckets datasketch's MinHashLSH would make.
Baseline, what the datasketch docs show: per document ``MinHash(num_perm)``, ``update`` per shingle with the
default SHA-1, then ``MinHashLSH.insert``; same normalisation and the same word 5-gram shingles. Also times our
whole ``fit_dedup`` (exact keys, verification, clustering, artifact) for reference.

Documents come from the demo corpus as ingest hands it on (with --reference, the repository's reference text);
prose is cut into pieces of about --chunk-chars characters, code files stay whole, and one document in ten gets
a reworded copy so the index has duplicates to find. One core; times are CPU seconds of this process.

    python benchmarks/bench_dedup.py --max-docs 2000
    python benchmarks/bench_dedup.py --max-docs 0 --chunk-chars 2000 --repeat 3   # the sketching bar: ~2 kB documents
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import random
import re
import tempfile
import unicodedata
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from corpus import Document, load_documents, megabytes, pages, spread, stage_table
from datasketch import MinHash, MinHashLSH
from timing import Rate, cpu_time, print_rates

from pretrain_core import schema, storage
from pretrain_core.dedup.candidates import candidate_pairs
from pretrain_core.dedup.config import DedupConfig
from pretrain_core.dedup.minhash import lsh_buckets, minhash_signatures
from pretrain_core.dedup.normalize import normalize_arrow, normalize_texts
from pretrain_core.dedup.shingles import ShingleKind, shingle_sets
from pretrain_core.dedup.stage import fit_dedup


def reworded(text: str, rng: random.Random) -> str:
    """A copy with about 5% of its words rewritten in runs of 8, as between two crawls of one page."""
    words = text.split()
    for _ in range(max(1, len(words) // 160)):
        at = rng.randrange(max(1, len(words) - 8))
        words[at : at + 8] = [w[::-1] for w in words[at : at + 8]]
    return " ".join(words)


def with_near_duplicates(docs: list[Document]) -> list[Document]:
    """The documents plus a reworded copy of every tenth one."""
    rng = random.Random(0)
    return docs + [doc._replace(text=reworded(doc.text, rng)) for doc in docs[::10]]


def our_sketches(texts: pa.Array | list[str], cfg: DedupConfig, kind: ShingleKind = "word") -> np.ndarray:
    """Normalise, shingle and sign, as the fit's map does for each shard (it reads an Arrow array)."""
    normalized = normalize_arrow(texts, cfg.ignore) if isinstance(texts, pa.Array) else normalize_texts(texts)
    sets = shingle_sets(normalized, kind, cfg.word_ngram, cfg.char_ngram, cfg.min_unspaced_share)
    return minhash_signatures(sets, cfg.num_perm, cfg.seed)


def plain_normalized(text: str) -> str:
    """The default normalisation with regular expressions: NFKC, lower case, words joined by single spaces."""
    return " ".join(re.findall(r"\w+", unicodedata.normalize("NFKC", text).lower()))


def word_shingles(text: str, k: int) -> list[bytes]:
    words = plain_normalized(text).split()
    return [" ".join(words[i : i + k]).encode("utf-8") for i in range(max(len(words) - k + 1, 1))]


def datasketch_sketches(texts: list[str], cfg: DedupConfig) -> None:
    """datasketch's batch update per document (SHA-1 per shingle, as its docs show) on the same shingles."""
    for text in texts:
        MinHash(num_perm=cfg.num_perm, seed=cfg.seed).update_batch(word_shingles(text, cfg.word_ngram))


def ours(texts: list[str], cfg: DedupConfig) -> tuple[int, tuple[int, int]]:
    """Candidate pairs found and the (bands, rows) datasketch chose."""
    sets = shingle_sets(normalize_texts(texts), "word", cfg.word_ngram, cfg.char_ngram, 0.0)
    signatures = minhash_signatures(sets, cfg.num_perm, cfg.seed)
    docs = np.flatnonzero(sets.sizes > 0)
    buckets, params = lsh_buckets(signatures, docs, cfg.threshold, cfg.lsh_false_negative_weight, None)
    return len(candidate_pairs(buckets, np.arange(len(texts)), cfg.full_pairs_limit)), params


def baseline(texts: list[str], cfg: DedupConfig, params: tuple[int, int]) -> None:
    """The same shingles, one SHA-1 and one numpy update per shingle, one LSH insert per document."""
    lsh = MinHashLSH(threshold=cfg.threshold, num_perm=cfg.num_perm, params=params)
    for key, text in enumerate(texts):
        minhash = MinHash(num_perm=cfg.num_perm, seed=cfg.seed)
        for shingle in word_shingles(text, cfg.word_ngram):
            minhash.update(shingle)
        lsh.insert(key, minhash)


def full_fit(docs: list[Document], cfg: DedupConfig, workdir: Path) -> dict[str, Any]:
    """Our whole fit over one shard of the documents; its summary artifact."""
    url = str(workdir / "clean" / "part-00000.parquet")
    storage.write_parquet(url, stage_table(docs, schema.CLEAN))
    artifacts = fit_dedup([url], cfg, str(workdir / "artifacts"))
    summary: dict[str, Any] = storage.read_json(artifacts["summary"])
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-docs", type=int, default=1000, help="documents before reworded copies (0 = all)")
    parser.add_argument("--chunk-chars", type=int, default=3000, help="prose document size (0 = whole documents)")
    parser.add_argument(
        "--reference", action="store_true", help="time the repo's reference text (data/reference), not the demo corpus"
    )
    parser.add_argument("--num-perm", type=int, default=128, help="MinHash permutations")
    parser.add_argument("--repeat", type=int, default=1, help="runs per implementation; the best is reported")
    args = parser.parse_args()

    cfg = DedupConfig(num_perm=args.num_perm)
    found, origin = load_documents(args.reference)
    docs = with_near_duplicates(spread(pages(found, args.chunk_chars), args.max_docs))
    texts = [doc.text for doc in docs]
    size = megabytes(texts)
    print(f"documents: {origin}; {len(texts)} timed, num_perm={cfg.num_perm}, word {cfg.word_ngram}-grams, one core")

    for kind in ("word", "auto"):  # compiled kernels and tables load once per process; not timed
        our_sketches(pa.array(texts[:10]), cfg, kind)
    our_sketches(texts[:10], cfg)
    for label, subset in (("all documents", texts), ("ASCII-only documents", [t for t in texts if t.isascii()])):
        mean_chars = sum(map(len, subset)) / max(len(subset), 1)
        arrow = pa.array(subset, pa.string())  # what the stage reads from Parquet
        mb = megabytes(subset)
        ways = (
            ("ours: from Arrow (the stage's path)", lambda a=arrow: our_sketches(a, cfg)),
            ("ours: from Python strings", lambda s=subset: our_sketches(s, cfg)),
            ("ours: from Arrow, shingle: auto (default)", lambda a=arrow: our_sketches(a, cfg, "auto")),
        )
        sketch_rates = [Rate(name, cpu_time(run, args.repeat)[0], len(subset), mb) for name, run in ways]
        peer_sketch, _ = cpu_time(lambda subset=subset: datasketch_sketches(subset, cfg), args.repeat)
        peer = Rate("datasketch: MinHash.update_batch per document", peer_sketch, len(subset), mb)
        sketch_rates.append(peer)
        print_rates(f"Sketching, {label} ({mean_chars:,.0f} characters on average)", sketch_rates, peer)

    _, params = ours(texts[:10], cfg)  # the same bands and rows for both; their optimisation is not timed
    ours_seconds, (pairs, _) = cpu_time(lambda: ours(texts, cfg), args.repeat)
    base_seconds, _ = cpu_time(lambda: baseline(texts, cfg, params), args.repeat)
    with tempfile.TemporaryDirectory() as workdir:
        fit_seconds, summary = cpu_time(lambda: full_fit(docs, cfg, Path(workdir)), args.repeat)
    naive = Rate("datasketch: MinHash.update(sha1) loop + insert", base_seconds, len(texts), size)
    rates = [
        Rate("ours: kernel signatures + numpy LSH banding", ours_seconds, len(texts), size),
        naive,
        Rate("ours: whole fit_dedup", fit_seconds, len(texts), size),
    ]
    print_rates(f"MinHash + LSH, bands x rows = {params[0]} x {params[1]}", rates, naive)
    print(
        f"LSH candidate pairs: {pairs}; fit found {summary['exact_duplicates']} exact and "
        f"{summary['near_duplicates']} near duplicates ({summary['verified_pairs']} pairs verified)"
    )


if __name__ == "__main__":
    main()
