"""Throughput of the quality stage's prose signals: the batch pass the stage runs (`prose_batch.prose_signal_matrix`,
one compiled walk over a shard's code points) against the plain definitions it is tested against
(`signals.prose_signals`, one document at a time: per-document numba calls, numpy and Python loops over lines), on
the same documents, with the same values (checked bit for bit here too).

Documents: the prose (every domain but code) of the demo corpus as ingest hands it on, or the `text` and `lang`
columns of the Parquet shards given with --shards (e.g. a run's `corpus/pii/data/*.parquet`). Rates are per core:
CPU seconds of this single-threaded process, the best of `--repeat` runs.

    python benchmarks/bench_quality_signals.py
    python benchmarks/bench_quality_signals.py --shards 'out/corpus/pii/data/*.parquet' --max-shards 12
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import glob

import numpy as np
import pyarrow.parquet as pq
from corpus import load_documents, megabytes
from timing import Rate, cpu_time, print_rates

from pretrain_core.clean.config import LangIdConfig
from pretrain_core.clean.langid import detect_language
from pretrain_core.quality.prose_batch import prose_signal_matrix
from pretrain_core.quality.signals import prose_signals


def documents(shards: str | None, max_shards: int) -> tuple[list[str], list[str], str]:
    """(texts, languages, where they came from): the shards' prose, or the demo corpus' with detected languages."""
    if shards:
        urls = sorted(glob.glob(shards))[:max_shards]
        tables = [pq.read_table(url, columns=["text", "lang", "domain"]).to_pylist() for url in urls]
        rows = [row for table in tables for row in table if row["domain"] != "code"]
        return [row["text"] for row in rows], [row["lang"] or "" for row in rows], f"{len(urls)} shards of {shards}"
    found, origin = load_documents()
    texts = [doc.text for doc in found if doc.domain != "code"]
    langid = LangIdConfig()
    return texts, [detect_language(text, langid).lang for text in texts], origin


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shards", help="a glob of Parquet shards with text, lang and domain columns")
    parser.add_argument("--max-shards", type=int, default=12, help="shards read from --shards (12)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each implementation (best is kept)")
    args = parser.parse_args()
    texts, langs, origin = documents(args.shards, args.max_shards)
    print(f"documents: {origin}; prose only, {len(texts)} docs, {megabytes(texts):.2f} MB")
    prose_signal_matrix(texts[:20], langs[:20])  # compile (or load) the pass outside the timing
    batch_seconds, batch = cpu_time(lambda: prose_signal_matrix(texts, langs), args.repeat)
    plain_seconds, plain = cpu_time(
        lambda: np.array([prose_signals(text, lang) for text, lang in zip(texts, langs, strict=True)]), args.repeat
    )
    if not ((batch == plain) | (np.isnan(batch) & np.isnan(plain))).all():
        raise SystemExit("the batch pass and the plain definitions disagree")
    size, n = megabytes(texts), len(texts)
    baseline = Rate("plain definitions, one document at a time", plain_seconds, n, size)
    rates = [Rate("batch pass (what the stage runs)", batch_seconds, n, size), baseline]
    print_rates("prose signals, texts to the signal matrix (ratios against the plain definitions)", rates, baseline)


if __name__ == "__main__":
    main()
