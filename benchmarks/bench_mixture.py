"""Speed and accuracy of mixture planning against the naive baseline: per-document Bernoulli sampling with
probability equal to each domain's fractional epoch (the usual first attempt).

Documents come from the demo corpus as ingest hands it on (else from real text on this machine, see corpus.py).
A tokenizer is trained first (not timed). Timed on one core (CPU seconds of this process): counting tokens (the
part of ``fit_mixture`` that reads every document, which has no baseline) and planning. Planning is also timed on
the real token counts repeated to --plan-docs documents, the scale of a real corpus shard set; its MB are the
text of the documents planned. Accuracy is the largest gap between a domain's realised token share and its
weight, in percentage points.

    python benchmarks/bench_mixture.py --plan-docs 1000000
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import random
import tempfile
from functools import partial

import numpy as np
from corpus import load_documents, megabytes, stage_table
from timing import Rate, cpu_time, print_rates

from pretrain_core import schema, storage
from pretrain_core.mixture.config import MixtureConfig
from pretrain_core.mixture.plan import count_tokens, plan_repeats
from pretrain_core.tokenize.config import TokenizerConfig
from pretrain_core.tokenize.train import fit_tokenizer


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--plan-docs", type=int, default=300_000, help="documents in the large planning run")
    parser.add_argument("--vocab-size", type=int, default=8000, help="tokenizer vocabulary (trained, not timed)")
    parser.add_argument(
        "--reference", action="store_true", help="time the repo's reference text (data/reference), not the demo corpus"
    )
    args = parser.parse_args()

    docs, origin = load_documents(args.reference)
    texts = [doc.text for doc in docs]
    cfg = MixtureConfig()
    with tempfile.TemporaryDirectory() as workdir:
        shard = f"{workdir}/part-00000.parquet"
        storage.write_parquet(shard, stage_table(docs, schema.QUALITY))
        tokenizer = fit_tokenizer([shard], TokenizerConfig(vocab_size=args.vocab_size), f"{workdir}/tokenizer")
        counted = count_tokens([shard], tokenizer["tokenizer"], num_threads=1)  # load the model outside the timing
        counting, _ = cpu_time(lambda: count_tokens([shard], tokenizer["tokenizer"], num_threads=1))
    print(f"documents: {origin}; {len(docs)} documents, one core")
    counter = Rate("ours: count_tokens", counting, len(docs), megabytes(texts))
    print_rates("token counting (fit_mixture's pass over the text; no baseline)", [counter], None)

    copies = -(-args.plan_docs // counted.num_rows)
    ids = [f"{i}#{k}" for k in range(copies) for i in counted["id"].to_pylist()][: args.plan_docs]
    domains = (counted["domain"].to_pylist() * copies)[: args.plan_docs]
    n_tokens = np.tile(counted["n_tokens"].to_numpy().astype(np.int64), copies)[: args.plan_docs]
    doc_mb = np.tile(np.asarray([len(t.encode("utf-8")) for t in texts]) / 1e6, copies)  # ids sort as docs do
    for title, size in (("demo-scale", counted.num_rows), ("large", len(ids))):
        planned_mb = float(doc_mb[:size].sum())
        train = np.ones(size, dtype=bool)  # every document trains: splits are assigned before planning
        repeats, summary = plan_repeats(ids[:size], domains[:size], n_tokens[:size], train, cfg)
        ours, _ = cpu_time(partial(plan_repeats, ids[:size], domains[:size], n_tokens[:size], train, cfg))
        budget = summary["total_tokens"]["target"]
        sample = partial(bernoulli_baseline, domains[:size], n_tokens[:size], cfg, budget)
        naive_seconds, naive_repeats = cpu_time(sample)
        naive = Rate("Bernoulli sampling", naive_seconds, size, planned_mb)
        rates = [Rate("ours: plan_repeats", ours, size, planned_mb), naive]
        print_rates(f"planning, {title}: {size} documents, budget {budget} tokens", rates, naive)
        domain_array = np.asarray(domains[:size])
        for name, chosen in (("ours", repeats), ("Bernoulli", naive_repeats)):
            print(f"  max share error, {name}: {share_error_pp(domain_array, n_tokens[:size], chosen, cfg):.3f} pp")


if __name__ == "__main__":
    main()
