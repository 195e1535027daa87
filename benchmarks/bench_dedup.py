"""Throughput of near-dup sketching and LSH candidate search: the path the dedup stage runs, against datasketch and
rensa (Rust), in one process on the same documents.

Ours is what the fit's map runs per batch of a shard (`stage.sketch_shard`): `normalize_arrow` over the Arrow
strings it reads, then `sketch_texts` (shingles hashed and signed in compiled kernels, pretrain_core/dedup/kernels.py);
the reduce then cuts each signature into bands (17 x 7 at the default threshold) and pairs the texts that share
a band (`candidates.candidate_pairs`), which this script does the same way on one batch. Word 5-gram shingles
everywhere (what the peers make), plus one row with the stage's default `shingle: auto` (character shingles for
Chinese and Japanese). The peers get the same documents, the same normalisation (NFKC, lower case, words; with
regular expressions in Python, which they leave to the user) and the same word 5-gram shingles:

- datasketch: `MinHash.update_batch` per document, and `MinHash.bulk` with its default SHA-1 and with xxh32 as
  `hashfunc`; for candidates, `MinHashLSH` with our bands and rows, every document inserted, then queried.
- rensa: `RMinHash.digest_matrix_from_token_sets` (its batch API, full-set R-MinHash); for candidates
  `from_token_sets`, `RMinHashLSH.insert_many`, `query_all`. Its LSH needs the bands to divide the permutations,
  so there it signs 119 = 17 x 7: the same bands, 7% fewer permutations than ours.

Signing alone is timed too, from our shingle hashes: ours against rensa's pre-hashed batch API fed the same hashes,
and against datasketch's `MinHash.bulk` fed their low 32 bits (its signatures must equal ours bit for bit).
Our whole `fit_dedup` (exact keys, the partitioned reduce, verification, clusters) is timed for reference.

Documents come from the demo corpus as ingest hands it on (with --reference, the repository's reference text);
prose is cut into pieces of about --chunk-chars characters, code files stay whole, and one document in ten gets
a reworded copy so the index has duplicates to find. One core (peers' thread pools set to one thread); times are
CPU seconds of this process, the best of --repeat runs.

    python benchmarks/bench_dedup.py
    python benchmarks/bench_dedup.py --max-docs 0 --chunk-chars 2000 --repeat 5   # ~2 kB documents, all of them
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("RAYON_NUM_THREADS", "1")  # rensa's batch APIs

import argparse
import random
import re
import tempfile
import unicodedata
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import rensa
import xxhash
from corpus import Document, load_documents, megabytes, pages, spread, stage_table
from datasketch import MinHash, MinHashLSH
from timing import Rate, cpu_time, print_rates

from pretrain_core import schema, storage
from pretrain_core.dedup.candidates import candidate_pairs
from pretrain_core.dedup.config import DedupConfig
from pretrain_core.dedup.minhash import lsh_params, minhash_signatures
from pretrain_core.dedup.near import Sketches, sketch_texts
from pretrain_core.dedup.normalize import normalize_arrow
from pretrain_core.dedup.shingles import ShingleSets, shingle_sets
from pretrain_core.dedup.stage import fit_dedup

LOW_32 = np.uint64(0xFFFFFFFF)


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


# -- ours ------------------------------------------------------------------------------------------------------------


def our_sketches(texts: pa.Array, cfg: DedupConfig) -> Sketches:
    """The fit's map on one batch: normalise the Arrow strings, shingle and sign (`stage.sketch_shard`)."""
    return sketch_texts(normalize_arrow(texts, cfg.ignore), cfg)


def band_pairs(sketches: Sketches, bands: int, rows: int, full_pairs_limit: int) -> np.ndarray:
    """Pairs of texts that share a band, as the reduce's `candidates` round finds them: each band's values compared
    whole, texts without shingles left out, buckets paired by `candidate_pairs`."""
    docs = np.flatnonzero(sketches.sizes > 0)
    whole_band = np.dtype((np.void, sketches.sketch.itemsize * rows))
    buckets: list[np.ndarray] = []
    for band in range(bands):
        values = np.ascontiguousarray(sketches.sketch[docs, band * rows : (band + 1) * rows]).view(whole_band)
        _, keys = np.unique(values.ravel(), return_inverse=True)
        order = np.argsort(keys, kind="stable")
        groups = np.split(docs[order], np.flatnonzero(np.diff(keys[order])) + 1)
        buckets += [group for group in groups if group.size > 1]
    return candidate_pairs(buckets, np.arange(len(sketches)), full_pairs_limit)


def our_candidates(texts: pa.Array, cfg: DedupConfig, bands: int, rows: int) -> int:
    """Sketch, band and pair one batch; the number of candidate pairs."""
    return len(band_pairs(our_sketches(texts, cfg), bands, rows, cfg.full_pairs_limit))


def full_fit(docs: list[Document], cfg: DedupConfig, workdir: Path) -> dict[str, Any]:
    """Our whole fit over one shard of the documents; its summary artifact."""
    url = str(workdir / "clean" / "part-00000.parquet")
    storage.write_parquet(url, stage_table(docs, schema.CLEAN))
    artifacts = fit_dedup([url], cfg, str(workdir / "artifacts"))
    summary: dict[str, Any] = storage.read_json(artifacts["summary"])
    return summary


# -- peers: the user's normalisation and shingles, then the library --------------------------------------------------


def plain_normalized(text: str) -> str:
    """The default normalisation with regular expressions: NFKC, lower case, words joined by single spaces."""
    return " ".join(re.findall(r"\w+", unicodedata.normalize("NFKC", text).lower()))


def word_shingles(text: str, k: int) -> list[str]:
    """Word k-grams of the normalised text (the whole text when it is shorter), as ours makes them."""
    words = plain_normalized(text).split()
    return [" ".join(words[i : i + k]) for i in range(max(len(words) - k + 1, 1))]


def shingle_bytes(texts: list[str], k: int) -> list[list[bytes]]:
    """What datasketch hashes: every shingle as UTF-8 bytes."""
    return [[s.encode() for s in word_shingles(text, k)] for text in texts]


def datasketch_update_batch(texts: list[str], cfg: DedupConfig) -> None:
    for shingles in shingle_bytes(texts, cfg.word_ngram):
        MinHash(num_perm=cfg.num_perm, seed=cfg.seed).update_batch(shingles)


def datasketch_bulk(texts: list[str], cfg: DedupConfig, hashfunc: Callable[[bytes], int] | None) -> list[MinHash]:
    extra = {"hashfunc": hashfunc} if hashfunc else {}
    return MinHash.bulk(shingle_bytes(texts, cfg.word_ngram), num_perm=cfg.num_perm, seed=cfg.seed, **extra)


def rensa_matrix(texts: list[str], cfg: DedupConfig) -> rensa.RMinHashDigestMatrix:
    shingles = [word_shingles(text, cfg.word_ngram) for text in texts]
    return rensa.RMinHash.digest_matrix_from_token_sets(shingles, cfg.num_perm, cfg.seed)


def pair_count(candidates: list[list[int]]) -> int:
    """Distinct pairs among each document's candidate keys (a document finds itself, and each pair twice)."""
    return len({(doc, key) for doc, keys in enumerate(candidates) for key in keys if doc < key})


def datasketch_candidates(texts: list[str], cfg: DedupConfig, params: tuple[int, int]) -> int:
    """`MinHash.bulk` (SHA-1), every sketch inserted into `MinHashLSH` with our bands and rows, then queried."""
    lsh = MinHashLSH(threshold=cfg.threshold, num_perm=cfg.num_perm, params=params)
    sketches = datasketch_bulk(texts, cfg, None)
    with lsh.insertion_session() as session:
        for key, sketch in enumerate(sketches):
            session.insert(key, sketch)
    return pair_count([lsh.query(sketch) for sketch in sketches])


def rensa_candidates(texts: list[str], cfg: DedupConfig, params: tuple[int, int]) -> int:
    """rensa's sketches (bands x rows permutations) into `RMinHashLSH`, then every document queried."""
    num_perm = params[0] * params[1]
    sketches = rensa.RMinHash.from_token_sets([word_shingles(t, cfg.word_ngram) for t in texts], num_perm, cfg.seed)
    lsh = rensa.RMinHashLSH(cfg.threshold, num_perm, params[0])
    lsh.insert_many(sketches)
    return pair_count(lsh.query_all(sketches))


# -- the tables ------------------------------------------------------------------------------------------------------


Ways = list[tuple[str, Callable[[], object]]]


def time_rows(ways: Ways, docs: int, mb: float, repeat: int) -> tuple[list[Rate], list[object]]:
    """Each way's rate (best of ``repeat``, after one untimed run that compiles kernels and builds tables) and
    result."""
    rates, results = [], []
    for name, run in ways:
        run()
        seconds, result = cpu_time(run, repeat)
        rates.append(Rate(name, seconds, docs, mb))
        results.append(result)
    return rates, results


def sketching(texts: list[str], label: str, cfg: DedupConfig, repeat: int) -> None:
    """Normalise + shingle + sign: ours from Arrow against the peers from the same strings."""
    arrow = pa.array(texts, pa.string())  # what the stage reads from Parquet
    auto = cfg.model_copy(update={"shingle": "auto"})
    ways: Ways = [
        ("ours: normalize_arrow + sketch_texts", lambda: our_sketches(arrow, cfg)),
        ("ours: the same, shingle: auto (default)", lambda: our_sketches(arrow, auto)),
        ("rensa: digest_matrix_from_token_sets", lambda: rensa_matrix(texts, cfg)),
        ("datasketch: MinHash.bulk, hashfunc=xxh32", lambda: datasketch_bulk(texts, cfg, xxhash.xxh32_intdigest)),
        ("datasketch: MinHash.bulk (SHA-1)", lambda: datasketch_bulk(texts, cfg, None)),
        ("datasketch: update_batch per document (SHA-1)", lambda: datasketch_update_batch(texts, cfg)),
        ("peers' Python normalise + shingle alone", lambda: [word_shingles(t, cfg.word_ngram) for t in texts]),
    ]
    rates, _ = time_rows(ways, len(texts), megabytes(texts), repeat)
    mean_chars = sum(map(len, texts)) / max(len(texts), 1)
    print_rates(f"Sketching, {label} ({mean_chars:,.0f} characters on average); vs rensa", rates, rates[2])


def signing(texts: list[str], cfg: DedupConfig, repeat: int) -> None:
    """Signatures alone, every implementation fed our shingle hashes (datasketch their low 32 bits, as ours signs)."""
    sets = shingle_sets(normalize_arrow(pa.array(texts), cfg.ignore), "word", cfg.word_ngram, cfg.char_ngram, 0.0)
    low = [(sets.of(i) & LOW_32).tolist() for i in range(len(sets))]
    check_same_signatures(sets, low, cfg)
    offsets = sets.offsets.astype(np.uint64)
    ways: Ways = [
        ("ours: minhash_signatures", lambda: minhash_signatures(sets, cfg.num_perm, cfg.seed)),
        (
            "rensa: digest_matrix_from_flat_token_hashes",
            lambda: rensa.RMinHash.digest_matrix_from_flat_token_hashes(sets.hashes, offsets, cfg.num_perm, cfg.seed),
        ),
        ("datasketch: MinHash.bulk, hashfunc=int", lambda: datasketch_signatures(low, cfg)),
    ]
    rates, _ = time_rows(ways, len(texts), megabytes(texts), repeat)
    print_rates(f"Signing alone, from the same {sets.hashes.size:,} shingle hashes; vs rensa", rates, rates[1])


def datasketch_signatures(low: list[list[int]], cfg: DedupConfig) -> list[MinHash]:
    return MinHash.bulk(low, num_perm=cfg.num_perm, seed=cfg.seed, hashfunc=int, scheme="affine32")


def check_same_signatures(sets: ShingleSets, low: list[list[int]], cfg: DedupConfig) -> None:
    """Ours equal datasketch's on the same hashes (same permutations): the comparison times the same result."""
    ours = minhash_signatures(sets, cfg.num_perm, cfg.seed)
    theirs = np.array([m.hashvalues for m in datasketch_signatures(low, cfg)], dtype=np.uint32)
    filled = sets.sizes > 0
    if not np.array_equal(ours[filled], theirs[filled]):
        raise AssertionError("our signatures differ from datasketch's on the same shingle hashes")


def candidates(docs: list[Document], cfg: DedupConfig, repeat: int) -> None:
    """Sketch + LSH candidate pairs, and our whole fit for reference."""
    texts = [doc.text for doc in docs]
    arrow = pa.array(texts, pa.string())
    bands, rows = lsh_params(cfg.threshold, cfg.num_perm, cfg.lsh_false_negative_weight)
    ways: Ways = [
        ("ours: sketch + band + pair", lambda: our_candidates(arrow, cfg, bands, rows)),
        ("rensa: RMinHashLSH insert_many + query_all", lambda: rensa_candidates(texts, cfg, (bands, rows))),
        ("datasketch: bulk + MinHashLSH insert + query", lambda: datasketch_candidates(texts, cfg, (bands, rows))),
    ]
    rates, pairs = time_rows(ways, len(texts), megabytes(texts), repeat)
    counts = ", ".join(f"{rate.name.split(':')[0]} {n}" for rate, n in zip(rates, pairs, strict=True))
    with tempfile.TemporaryDirectory() as workdir:
        fit_seconds, summary = cpu_time(lambda: full_fit(docs, cfg, Path(workdir)), repeat)
    rates.append(Rate("ours: whole fit_dedup", fit_seconds, len(texts), megabytes(texts)))
    print_rates(f"Sketch + LSH candidate pairs, bands x rows = {bands} x {rows}; vs rensa", rates, rates[1])
    print(f"  candidate pairs: {counts}")
    print(
        f"  fit found {summary['exact_duplicates']} exact and {summary['near_duplicates']} near duplicates"
        f" ({summary['verified_pairs']} pairs verified)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-docs", type=int, default=1000, help="documents before reworded copies (0 = all)")
    parser.add_argument("--chunk-chars", type=int, default=3000, help="prose document size (0 = whole documents)")
    parser.add_argument(
        "--reference", action="store_true", help="time the repo's reference text (data/reference), not the demo corpus"
    )
    parser.add_argument("--num-perm", type=int, default=128, help="MinHash permutations")
    parser.add_argument("--repeat", type=int, default=5, help="runs per implementation; the best is reported")
    args = parser.parse_args()

    cfg = DedupConfig(num_perm=args.num_perm, shingle="word")
    found, origin = load_documents(args.reference)
    docs = with_near_duplicates(spread(pages(found, args.chunk_chars), args.max_docs))
    texts = [doc.text for doc in docs]
    print(f"documents: {origin}; {len(texts)} timed, num_perm={cfg.num_perm}, word {cfg.word_ngram}-grams, one core")
    print(f"rensa {version('rensa')}, datasketch {version('datasketch')}; ratios are against rensa")
    sketching(texts, "all documents", cfg, args.repeat)
    sketching([t for t in texts if t.isascii()], "ASCII-only documents", cfg, args.repeat)
    signing(texts, cfg, args.repeat)
    candidates(docs, cfg, args.repeat)


if __name__ == "__main__":
    main()
