"""Throughput of perplexity scoring: ours against a per-token Python loop over the same model, and against
SentencePiece encoding alone (the floor neither can beat).

Ours (`ReferenceModel.perplexities`): one SentencePiece call per batch of lines, then n-gram hashes, table
lookups and Kneser-Ney interpolation as whole-array numpy operations. Baseline: the same tokeniser and the
same fitted model held in Python dicts, with the hashes and the interpolation computed token by token, the
way a straightforward port of KenLM's query loop to Python looks. Both must give the same perplexities.

Documents: the prose of the demo corpus (JSONL/Parquet text fields under data/demo) when it exists, else
the Debian handbook and licence texts on this machine. Even documents train the reference model, odd ones are
scored. Rates are per core: CPU seconds of this single-threaded process (wall time is shown too).

    python benchmarks/bench_quality.py --max-docs 1500
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import html
import re
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from pretrain_core.quality.config import QualityConfig, ReferenceConfig
from pretrain_core.quality.ngram import EMPTY_CONTEXT, NgramLM
from pretrain_core.quality.reference import read_reference_file, reference_files, train_reference_model
from pretrain_core.quality.scoring import ReferenceModel, split_lines

REPO_ROOT = Path(__file__).resolve().parent.parent
DEMO = REPO_ROOT / "data" / "demo"
HANDBOOK = Path("/usr/share/doc/debian-handbook/html/en-US")
LICENCES = Path("/usr/share/common-licenses")
MASK = (1 << 64) - 1
MUL, MIX1, MIX2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


def load_texts(max_docs: int) -> tuple[list[str], str]:
    """Prose documents and where they came from."""
    if DEMO.is_dir():
        globs = [str(DEMO / "**" / f"*{suffix}") for suffix in (".jsonl.gz", ".jsonl.zst", ".jsonl", ".parquet")]
        ref = ReferenceConfig(urls=globs, domains=["general"])
        texts = [r.text for url in reference_files_safe(ref) for r in read_reference_file(url, ref)]
        if texts:
            return _spread(texts, max_docs), f"demo corpus ({DEMO})"
    texts = []
    for page in sorted(HANDBOOK.glob("*.html")):
        body = re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8"))
        texts.append("\n".join(" ".join(line.split()) for line in html.unescape(body).splitlines() if line.strip()))
    texts += [p.read_text(encoding="utf-8") for p in sorted(LICENCES.iterdir()) if p.is_file()]
    return _spread(texts, max_docs), "Debian handbook and licence texts"


def reference_files_safe(ref: ReferenceConfig) -> list[str]:
    """The files of the globs that match something (the demo has no plain .jsonl, for instance)."""
    files: list[str] = []
    for url in ref.urls:
        try:
            files += reference_files(ref.model_copy(update={"urls": [url]}))
        except FileNotFoundError:
            continue
    return files


def _spread(texts: list[str], max_docs: int) -> list[str]:
    """Up to ``max_docs`` texts taken evenly across the list, so every source is represented."""
    step = max(1, len(texts) // max_docs)
    return texts[::step][:max_docs]


class NaiveScorer:
    """The same model, scored one token at a time with Python ints and dict lookups."""

    def __init__(self, model: ReferenceModel) -> None:
        lm: NgramLM = model.lm
        self.tokenizer, self.order, self.gamma0 = model.tokenizer, lm.order, lm.gamma0
        self.base = 1.0 / (lm.vocab_size - 1)
        self.tables = [
            dict(zip(k.tolist(), zip(a.tolist(), g.tolist(), strict=True), strict=True))
            for k, a, g in zip(lm.keys, lm.alpha, lm.gamma, strict=True)
        ]

    @staticmethod
    def extend(key: int, token: int) -> int:
        x = ((key * MUL) & MASK) ^ (token + 1)
        x ^= x >> 30
        x = (x * MIX1) & MASK
        x ^= x >> 27
        x = (x * MIX2) & MASK
        x ^= x >> 31
        return x | 1

    def perplexity(self, text: str) -> float:
        tok, n = self.tokenizer, self.order
        total, count = 0.0, 0
        for line in split_lines(text):
            ids, _ = tok.encode([line])
            tokens = [tok.bos] * (n - 1) + ids.tolist() + [tok.eos]
            for i in range(n - 1, len(tokens)):
                gram = self.extend(int(EMPTY_CONTEXT), tokens[i])
                context = int(EMPTY_CONTEXT)
                alpha = self.tables[0].get(gram, (0.0, 1.0))[0]
                prob = alpha + self.gamma0 * self.base
                for k in range(2, n + 1):
                    context = self.extend(context, tokens[i - k + 1])
                    gram = self.extend(gram, tokens[i - k + 1])
                    gamma = self.tables[k - 2].get(context, (0.0, 1.0))[1]
                    alpha = self.tables[k - 1].get(gram, (0.0, 1.0))[0]
                    prob = alpha + gamma * prob
                total += float(np.log10(prob))
                count += 1
        return float(10 ** (-total / count))


def timed(fn: Callable[[], object]) -> tuple[float, float, object]:
    cpu, wall = time.process_time(), time.perf_counter()
    result = fn()
    return time.process_time() - cpu, time.perf_counter() - wall, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-docs", type=int, default=1500, help="documents loaded (half train, half scored)")
    parser.add_argument("--baseline-docs", type=int, default=60, help="scored documents the slow baseline sees")
    parser.add_argument("--order", type=int, default=QualityConfig().order, help="n-gram order")
    parser.add_argument("--vocab-size", type=int, default=QualityConfig().vocab_size, help="SentencePiece vocab")
    args = parser.parse_args()

    texts, origin = load_texts(args.max_docs)
    reference, scored = texts[0::2], texts[1::2]
    cfg = QualityConfig(order=args.order, vocab_size=args.vocab_size)
    cpu, wall, model = timed(lambda: train_reference_model(reference, "sentencepiece", cfg))
    assert isinstance(model, ReferenceModel)
    ref_mb = sum(len(t.encode()) for t in reference) / 1e6
    print(f"documents: {origin}; reference {len(reference)} docs {ref_mb:.2f} MB, scored {len(scored)} docs")
    print(f"fit: {cpu:.1f} s CPU ({wall:.1f} s wall), {model.lm.n_grams:,} n-grams, order {model.lm.order}")

    model.perplexities(scored[:5])  # build the lookup tables outside the timing, as a warm worker would have
    mb = sum(len(t.encode()) for t in scored) / 1e6
    cpu, wall, ours = timed(lambda: model.perplexities(scored))
    print(f"ours:      {len(scored) / cpu:9.1f} docs/s  {mb / cpu:6.2f} MB/s per core   ({mb / wall:.2f} MB/s wall)")
    ours_rate = mb / cpu

    lines = [line for text in scored for line in split_lines(text)]
    cpu, _, _ = timed(lambda: model.tokenizer.encode(lines))
    print(f"spm only:  {len(scored) / cpu:9.1f} docs/s  {mb / cpu:6.2f} MB/s per core   (tokenising, no model)")

    naive = NaiveScorer(model)
    subset = scored[: args.baseline_docs]
    sub_mb = sum(len(t.encode()) for t in subset) / 1e6
    cpu, _, slow = timed(lambda: [naive.perplexity(t) for t in subset])
    assert isinstance(slow, list)
    np.testing.assert_allclose(slow, np.asarray(ours)[: len(subset)], rtol=1e-4)  # same model, same numbers
    print(f"baseline:  {len(subset) / cpu:9.1f} docs/s  {sub_mb / cpu:6.2f} MB/s per core   (per-token Python loop)")
    print(f"ratio ours / baseline: {ours_rate / (sub_mb / cpu):.1f}x")


if __name__ == "__main__":
    main()
