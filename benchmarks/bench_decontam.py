"""Decontamination: building an index of 100 M evaluation n-grams in bounded memory, and the cost per MB of checking
documents against it, beside a plain-Python n-gram check (word tuples in a set) in the same process.

The index part adds ``--index-ngrams`` random 64-bit n-gram hashes (evaluation sets' n-grams hash uniformly) through
`IndexWriter` a million at a time, as the stage's fit does, and prints its wall time, this process's peak resident
memory, the filter's size and the index's size on disk. The scan part checks the demo corpus (as ingest hands it on;
with --reference, the repository's reference text) against that index plus the n-grams of Vim's tutors, as the
stage does per shard (`find_overlaps`: normalise, hash, filter, exact look-up), against a baseline that a person
would write: NFKC and lower case, words by regular expression, 13-word tuples looked up in a Python set of the
tutors' tuples (no 100 M set: that would not fit). One core; scan times are CPU seconds, the best of --repeat.

    python benchmarks/bench_decontam.py                       # 100 M n-grams: about 2 GB of scratch disk
    python benchmarks/bench_decontam.py --index-ngrams 10000000 --repeat 3
"""

from __future__ import annotations

import argparse
import re
import resource
import tempfile
import time
import unicodedata
from pathlib import Path

import numpy as np
import pyarrow as pa
from corpus import REFERENCE, load_documents, megabytes
from timing import Rate, cpu_time, print_rates

from pretrain_core.decontam.config import DecontamConfig
from pretrain_core.decontam.eval_sets import PARAGRAPH
from pretrain_core.decontam.index import IndexWriter, NgramIndex
from pretrain_core.decontam.ngrams import ngram_hashes, normalised
from pretrain_core.decontam.scan import find_overlaps
from pretrain_core.dedup.config import DedupConfig

_WORD = re.compile(r"\w+")


def tutor_items() -> list[str]:
    items = []
    for path in sorted((REFERENCE / "vim-tutor").glob("tutor*")):
        items += [p.strip() for p in PARAGRAPH.split(path.read_text(encoding="utf-8")) if len(p.strip()) > 80]
    return items


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def build_index(folder: str, ngrams: int, items: list[str], cfg: DecontamConfig) -> dict[str, float]:
    rng = np.random.default_rng(0)
    writer = IndexWriter(["random", "tutors"])
    started = time.perf_counter()
    for start in range(0, ngrams, 1_000_000):
        writer.add("random", rng.integers(0, 2**64, size=min(1_000_000, ngrams - start), dtype=np.uint64))
    tutors = ngram_hashes(normalised(pa.array(items), DedupConfig().ignore), cfg.ngram, cfg.unspaced_chars_per_word)
    writer.add("tutors", np.unique(tutors.hashes))
    info = writer.finish(folder, cfg.false_positive_rate, cfg.max_filter_bytes, {})
    return {
        "seconds": time.perf_counter() - started,
        "filter_mib": info["filter_bytes"] / 2**20,
        "rate": info["filter_false_positive_rate"],
        "disk_mib": sum(p.stat().st_size for p in Path(folder).iterdir()) / 2**20,
    }


def python_baseline(texts: list[str], items: list[str], n: int) -> int:
    def grams(text: str) -> set[tuple[str, ...]]:
        words = _WORD.findall(unicodedata.normalize("NFKC", text).lower())
        return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}

    index = set().union(*(grams(item) for item in items))
    return sum(1 for text in texts if not grams(text).isdisjoint(index))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index-ngrams", type=int, default=100_000_000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--reference", action="store_true", help="scan the repository's reference text instead")
    args = parser.parse_args()
    cfg, dedup = DecontamConfig(), DedupConfig()
    items = tutor_items()
    docs, origin = load_documents(args.reference)
    texts = [d.text for d in docs]
    before = peak_rss_mib()
    with tempfile.TemporaryDirectory(prefix="bench-decontam-") as folder:
        built = build_index(folder, args.index_ngrams, items, cfg)
        print(
            f"index of {args.index_ngrams:,} random n-grams + {len(items)} tutor paragraphs: built in "
            f"{built['seconds']:.1f} s wall; peak resident memory {peak_rss_mib():.0f} MiB ({before:.0f} before); "
            "filter "
            f"{built['filter_mib']:.0f} MiB (false positives {built['rate']:.1e}); {built['disk_mib']:.0f} MiB on disk"
        )
        size = megabytes(texts)
        index = NgramIndex.open(folder)
        ours_s, found = cpu_time(lambda: find_overlaps(pa.array(texts), index, cfg, dedup), args.repeat)
        base_s, base_found = cpu_time(lambda: python_baseline(texts, items, cfg.ngram), args.repeat)
        print(
            f"\n{origin}: {len(texts)} documents, {size:.2f} MB; overlapping: ours {len(found)}, baseline {base_found}"
        )
        ours = Rate(f"find_overlaps ({args.index_ngrams:,}-n-gram index)", ours_s, len(texts), size)
        base = Rate("Python word tuples in a set (tutors only)", base_s, len(texts), size)
        print_rates("checking documents, one core", [base, ours], base)
        print(f"\ncost: {ours_s / size:.3f} CPU s per MB (baseline {base_s / size:.3f}); peak {peak_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
