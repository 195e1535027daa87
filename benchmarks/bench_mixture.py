"""Speed and accuracy of mixture planning against the naive baseline: per-document Bernoulli sampling with
probability equal to each domain's fractional epoch (the usual first attempt).

Documents come from the demo corpus when it exists (data/demo/sources.yaml, read by the pipeline's own
ingestion), else from real text on this machine. A tokenizer is trained first (not timed). Timed on one core:
counting tokens (the part of ``fit_mixture`` that reads every document) and planning. Planning is also timed
on the real token counts repeated to --plan-docs documents, the scale of a real corpus shard set. Accuracy is
the largest gap between a domain's realised token share and its weight, in percentage points.

    python benchmarks/bench_mixture.py --plan-docs 1000000
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import glob
import random
import sysconfig
import tempfile
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

import numpy as np
import pyarrow as pa
import yaml

from pretrain_core import schema, storage
from pretrain_core.ingest.config import IngestConfig, SourceConfig
from pretrain_core.ingest.listing import list_source_files
from pretrain_core.ingest.stage import ingest_files
from pretrain_core.mixture.config import MixtureConfig
from pretrain_core.mixture.plan import count_tokens, plan_repeats
from pretrain_core.tokenize.config import TokenizerConfig
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


def quality_table(docs: list[tuple[str, str]]) -> pa.Table:
    """The documents as the quality stage hands them on (upstream columns filled with plausible values)."""
    n = len(docs)
    ids = [f"doc-{i:07d}" for i in range(n)]
    columns = {
        "id": ids,
        "text": [text for text, _ in docs],
        "source": ["bench"] * n,
        "domain": [domain for _, domain in docs],
        "location": [f"bench:{i}" for i in range(n)],
        "code_language": ["python" if d == "code" else None for _, d in docs],
        "lang": ["und"] * n,
        "lang_score": [1.0] * n,
        "dup_cluster": ids,
        "dup_cluster_size": [1] * n,
        "pii_count": [0] * n,
        "pii_types": [[] for _ in range(n)],
        "perplexity": [100.0] * n,
        "quality_bucket": ["head"] * n,
    }
    return pa.table(columns, schema=schema.QUALITY)


def bernoulli_baseline(domains: list[str], n_tokens: np.ndarray, cfg: MixtureConfig, budget: int) -> np.ndarray:
    """Each document kept floor(e) times plus once more with probability frac(e), e = its domain's epochs."""
    available: dict[str, int] = {}
    for domain, tokens in zip(domains, n_tokens.tolist(), strict=True):
        available[domain] = available.get(domain, 0) + tokens
    epochs = {d: cfg.weights.get(d, 0.0) * budget / a if a else 0.0 for d, a in available.items()}
    rng = random.Random(cfg.seed)
    repeats = [int(epochs[d]) + (rng.random() < epochs[d] - int(epochs[d])) for d in domains]
    return np.asarray(repeats, dtype=np.int64)


def share_error_pp(domains: np.ndarray, n_tokens: np.ndarray, repeats: np.ndarray, cfg: MixtureConfig) -> float:
    """Largest |realised share - weight| over the domains, in percentage points."""
    used = n_tokens * repeats
    total = used.sum()
    return max(abs(used[domains == d].sum() / total - w) * 100 for d, w in cfg.weights.items())


def timed(run: Callable[[], object]) -> float:
    """CPU seconds of this process: per-core cost, unaffected by other load."""
    started = time.process_time()
    run()
    return time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--plan-docs", type=int, default=300_000, help="documents in the large planning run")
    parser.add_argument("--vocab-size", type=int, default=8000, help="tokenizer vocabulary (trained, not timed)")
    args = parser.parse_args()

    docs = demo_documents() or list(local_documents())
    megabytes = sum(len(text.encode("utf-8")) for text, _ in docs) / 1e6
    cfg = MixtureConfig()
    with tempfile.TemporaryDirectory() as workdir:
        shard = f"{workdir}/part-00000.parquet"
        storage.write_parquet(shard, quality_table(docs))
        tokenizer = fit_tokenizer([shard], TokenizerConfig(vocab_size=args.vocab_size), f"{workdir}/tokenizer")
        counted = count_tokens([shard], tokenizer["tokenizer"], num_threads=1)
        counting = timed(lambda: count_tokens([shard], tokenizer["tokenizer"], num_threads=1))
    print(f"{len(docs)} documents, {megabytes:.2f} MB, one core")
    rate = f"{len(docs) / counting:9.1f} docs/s {megabytes / counting:7.3f} MB/s"
    print(f"token counting (fit_mixture's pass over the text) {rate}")

    copies = -(-args.plan_docs // counted.num_rows)
    ids = [f"{i}#{k}" for k in range(copies) for i in counted["id"].to_pylist()][: args.plan_docs]
    domains = (counted["domain"].to_pylist() * copies)[: args.plan_docs]
    n_tokens = np.tile(counted["n_tokens"].to_numpy().astype(np.int64), copies)[: args.plan_docs]
    for title, size in (("demo-scale", counted.num_rows), ("large", len(ids))):
        plan = partial(plan_repeats, ids[:size], domains[:size], n_tokens[:size], cfg)
        repeats, summary = plan()
        ours = timed(plan)
        budget = summary["total_tokens"]["target"]
        sample = partial(bernoulli_baseline, domains[:size], n_tokens[:size], cfg, budget)
        naive_repeats = sample()
        naive = timed(sample)
        domain_array = np.asarray(domains[:size])
        print(f"\nplanning, {title}: {size} documents, budget {budget} tokens")
        for name, seconds, chosen in (("plan_repeats", ours, repeats), ("Bernoulli sampling", naive, naive_repeats)):
            error = share_error_pp(domain_array, n_tokens[:size], chosen, cfg)
            print(f"  {name:20s} {size / seconds:12.0f} docs/s   max share error {error:6.3f} pp")
        print(f"  speed ratio {naive / ours:.2f}x (>1: ours faster)")


if __name__ == "__main__":
    main()
