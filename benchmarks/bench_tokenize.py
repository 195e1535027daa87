"""Throughput of tokenization + packing against the naive baseline: a per-document SentencePiece ``encode``
loop whose ids are appended to Python lists and sliced into windows.

Documents come from the demo corpus when it exists (data/demo/sources.yaml, read by the pipeline's own
ingestion), else from real text on this machine: OS licences and package READMEs, CPython's CJK test texts and
standard-library modules as code. A tokenizer is trained and the default mixture planned on them first (not
timed); both implementations then run on the sampled documents once each, and on the mixture output with its
up-sampled copies (which the stage encodes once per document). One core (``num_threads=1``); times are CPU
seconds of this process.

    python benchmarks/bench_tokenize.py --max-docs 2000 --vocab-size 8000 --seq-len 512
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import glob
import sysconfig
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import sentencepiece as spm
import yaml

from pretrain_core import schema, storage
from pretrain_core.ingest.config import IngestConfig, SourceConfig
from pretrain_core.ingest.listing import list_source_files
from pretrain_core.ingest.stage import ingest_files
from pretrain_core.mixture.config import MixtureConfig
from pretrain_core.mixture.plan import fit_mixture
from pretrain_core.mixture.stage import MixtureStage
from pretrain_core.tokenize.config import PackConfig, TokenizerConfig
from pretrain_core.tokenize.encode import load_tokenizer
from pretrain_core.tokenize.splits import fit_splits
from pretrain_core.tokenize.stage import TokenizeStage
from pretrain_core.tokenize.train import fit_tokenizer

REPO_ROOT = Path(__file__).resolve().parent.parent
DEMO = REPO_ROOT / "data" / "demo"
STDLIB = Path(sysconfig.get_paths()["stdlib"])


def demo_documents() -> list[tuple[str, str]]:
    """(text, domain) of the demo corpus, read by the pipeline's own ingestion; empty until the corpus is built."""
    listing = DEMO / "sources.yaml"
    docs: list[tuple[str, str]] = []
    for entry in yaml.safe_load(listing.read_text(encoding="utf-8")) if listing.is_file() else []:
        source = SourceConfig.model_validate({**entry, "path": str(REPO_ROOT / entry["path"])})
        try:
            files = list_source_files(source)
        except FileNotFoundError:
            continue
        output, _, _ = ingest_files([f.url for f in files], source, IngestConfig())
        docs += zip(output.kept["text"].to_pylist(), output.kept["domain"].to_pylist(), strict=True)
    return docs


def local_documents() -> Iterator[tuple[str, str]]:
    """(text, domain) from real text installed on this machine, cut at blank lines into ~3 kB pages."""
    sources = [(p, "specialist") for p in sorted(glob.glob("/usr/share/common-licenses/*"))]
    sources += [(p, "general") for p in sorted(glob.glob("/usr/share/doc/*/README*")) if not p.endswith(".gz")]
    sources += [(p, "general") for p in sorted(glob.glob(str(STDLIB / "test/cjkencodings/*-utf8.txt")))]
    sources += [(str(p), "code") for p in sorted(STDLIB.glob("*.py"))]
    for name, domain in sources:
        if not Path(name).is_file():
            continue
        page = ""
        for paragraph in Path(name).read_text(encoding="utf-8", errors="replace").split("\n\n"):
            page = f"{page}\n\n{paragraph}" if page else paragraph
            if len(page) >= 3000:
                yield page, domain
                page = ""
        if page.strip():
            yield page, domain


def quality_table(max_docs: int) -> pa.Table:
    """The documents as the quality stage hands them on (upstream columns filled with plausible values)."""
    docs = demo_documents() or list(local_documents())
    if max_docs and len(docs) > max_docs:  # evenly spread, so every source keeps its share
        docs = [docs[i * len(docs) // max_docs] for i in range(max_docs)]
    n = len(docs)
    columns = {
        "id": [f"doc-{i:07d}" for i in range(n)],
        "text": [text for text, _ in docs],
        "source": ["bench"] * n,
        "domain": [domain for _, domain in docs],
        "location": [f"bench:{i}" for i in range(n)],
        "code_language": ["python" if d == "code" else None for _, d in docs],
        "lang": ["und"] * n,
        "lang_score": [1.0] * n,
        "dup_cluster": [f"doc-{i:07d}" for i in range(n)],
        "dup_cluster_size": [1] * n,
        "pii_count": [0] * n,
        "pii_types": [[] for _ in range(n)],
        "perplexity": [100.0] * n,
        "quality_bucket": ["head"] * n,
    }
    return pa.table(columns, schema=schema.QUALITY)


def baseline(tokenizer: spm.SentencePieceProcessor, texts: list[str], seq_len: int) -> int:
    """What a first attempt does: encode one document at a time, extend a list, slice windows; returns windows."""
    stream: list[int] = []
    windows = []
    for text in texts:
        stream.extend([tokenizer.bos_id(), *tokenizer.encode(text), tokenizer.eos_id()])
        while len(stream) > seq_len:
            windows.append(stream[: seq_len + 1])
            stream = stream[seq_len:]
    return len(windows)


def timed(run: Callable[[], object], repeat: int) -> float:
    """Best CPU seconds of this process over ``repeat`` runs: per-core cost, unaffected by other load."""
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        run()
        best = min(best, time.process_time() - started)
    return best


def compare(
    title: str, stage: TokenizeStage, tokenizer: spm.SentencePieceProcessor, table: pa.Table, repeat: int
) -> None:
    texts = table.column("text").to_pylist()
    megabytes = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    output = stage.process(table)
    tokens = sum(v for k, v in output.stats.items() if k.split("_")[0] == "tokens" and "discarded" not in k)
    ours = timed(lambda: stage.process(table), repeat)
    base = timed(lambda: baseline(tokenizer, texts, stage.cfg.seq_len), repeat)
    print(f"\n{title}: {len(texts)} rows, {megabytes:.2f} MB, {tokens:.0f} tokens, one core")
    for name, seconds in (("tokenize stage (batch encode + pack)", ours), ("per-doc encode loop + list slicing", base)):
        rate = f"{tokens / seconds / 1e6:7.3f} Mtokens/s {megabytes / seconds:7.3f} MB/s"
        print(f"  {name:38s} {len(texts) / seconds:9.1f} docs/s {rate}")
    print(f"  speed-up: {base / ours:.2f}x  ({output.kept.num_rows} sequences of {stage.cfg.seq_len + 1} ids)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-docs", type=int, default=2000, help="documents to time (0 = all found)")
    parser.add_argument("--vocab-size", type=int, default=8000, help="tokenizer vocabulary (trained, not timed)")
    parser.add_argument("--seq-len", type=int, default=512, help="packed sequence length")
    parser.add_argument("--repeat", type=int, default=1, help="runs per implementation; the best is reported")
    args = parser.parse_args()

    table = quality_table(args.max_docs)
    with tempfile.TemporaryDirectory() as workdir:
        shard = f"{workdir}/part-00000.parquet"
        storage.write_parquet(shard, table)
        artifacts = fit_tokenizer([shard], TokenizerConfig(vocab_size=args.vocab_size), f"{workdir}/tokenizer")
        mixture = fit_mixture([shard], MixtureConfig(), artifacts["tokenizer"], f"{workdir}/mixture")
        copies = MixtureStage(MixtureConfig(), mixture).process(table).kept
        unique = copies.filter(pc.equal(copies["repeat_index"], 0))
        pack = PackConfig(seq_len=args.seq_len, num_threads=1)
        mixture_shard = f"{workdir}/mixture.parquet"
        storage.write_parquet(mixture_shard, copies)
        artifacts |= fit_splits([mixture_shard], pack, f"{workdir}/splits")
        stage = TokenizeStage(pack, artifacts)
        tokenizer = load_tokenizer(artifacts["tokenizer"])
        stage.process(unique.slice(0, 10))  # load the model and split table outside the timing
        compare("each sampled document once", stage, tokenizer, unique, args.repeat)
        compare("mixture output (up-sampled copies included)", stage, tokenizer, copies, args.repeat)


if __name__ == "__main__":
    main()
