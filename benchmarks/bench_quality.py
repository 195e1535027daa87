"""Throughput of perplexity scoring: ours against a per-token Python loop over the same model, and against
SentencePiece encoding alone (the floor neither can beat).

Ours (`ReferenceModel.perplexities`): one SentencePiece call per batch of lines, then n-gram hashes, table
lookups and Kneser-Ney interpolation as whole-array numpy operations, for the lexical model and for the skeleton
model (the same text as kept words and word shapes, see pretrain_core/quality/skeleton.py), whose perplexities
the stage combines. The lexical model alone is timed too: it is what the stage computed before the skeleton model.
Baseline: the same tokeniser and the same fitted lexical model held in Python dicts, with the hashes and the
interpolation computed token by token, the way a straightforward port of KenLM's query loop to Python looks. Both
must give the same lexical perplexities.

The whole per-shard stage (`QualityStage.process`: both models, every signal, the shipped classifier, the score)
is timed too, on the same documents with the same reference: scoring every document, and taking the scores the fit
kept of its cut-off sample (which here holds every scored document, as on a corpus of up to `cutoff_sample_docs`
documents per language).

Documents: the prose (every domain but code) of the demo corpus as ingest hands it on, else real text on this
machine (see corpus.py). Even documents train the reference model, odd ones are scored. Rates are per core: CPU
seconds of this single-threaded process, the best of `--repeat` runs.

    python benchmarks/bench_quality.py --max-docs 1500
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import json
import tempfile

import numpy as np
import pyarrow as pa
from corpus import load_documents, megabytes, spread
from timing import Rate, cpu_time, print_rates

from pretrain_core import schema, storage
from pretrain_core.clean.config import LangIdConfig
from pretrain_core.clean.langid import detect_language
from pretrain_core.quality.config import QualityConfig, ReferenceConfig
from pretrain_core.quality.ngram import EMPTY_CONTEXT, NgramLM
from pretrain_core.quality.reference import train_reference_model
from pretrain_core.quality.scoring import ReferenceModel, split_lines
from pretrain_core.quality.stage import SCORED_SAMPLE, QualityStage, fit_quality

MASK = (1 << 64) - 1
MUL, MIX1, MIX2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-docs", type=int, default=1500, help="documents loaded (half train, half scored)")
    parser.add_argument("--baseline-docs", type=int, default=60, help="scored documents the slow baseline sees")
    parser.add_argument("--order", type=int, default=QualityConfig().order, help="n-gram order")
    parser.add_argument(
        "--reference", action="store_true", help="time the repo's reference text (data/reference), not the demo corpus"
    )
    parser.add_argument("--vocab-size", type=int, default=QualityConfig().vocab_size, help="SentencePiece vocab")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each implementation (best is kept)")
    args = parser.parse_args()

    found, origin = load_documents(args.reference)
    texts = spread([doc.text for doc in found if doc.domain != "code"], args.max_docs)
    reference, scored = texts[0::2], texts[1::2]
    cfg = QualityConfig(order=args.order, vocab_size=args.vocab_size)
    fit_seconds, model = cpu_time(lambda: train_reference_model(reference, "sentencepiece", cfg))
    print(f"documents: {origin}; prose only, reference {len(reference)} docs {megabytes(reference):.2f} MB")
    print(f"fit: {fit_seconds:.1f} CPU s, {model.lm.n_grams:,} n-grams, order {model.lm.order}, one core")
    if model.skeleton is not None:
        words, skeleton_lm = len(model.skeleton.tokenizer.words), model.skeleton.lm
        print(f"skeleton: {words} kept words, {skeleton_lm.n_grams:,} n-grams, order {skeleton_lm.order}")

    lexical = ReferenceModel(model.tokenizer, model.lm)  # the stage before the skeleton model
    model.perplexities(scored[:5])  # build the lookup tables outside the timing, as a warm worker would have
    size = megabytes(scored)
    seconds, _ = cpu_time(lambda: model.perplexities(scored), args.repeat)
    lexical_seconds, ours = cpu_time(lambda: lexical.perplexities(scored), args.repeat)
    lines = [line for text in scored for line in split_lines(text)]
    spm_seconds, _ = cpu_time(lambda: model.tokenizer.encode(lines), args.repeat)

    naive = NaiveScorer(lexical)
    subset = scored[: args.baseline_docs]
    naive_seconds, slow = cpu_time(lambda: [naive.perplexity(t) for t in subset])
    np.testing.assert_allclose(slow, np.asarray(ours)[: len(subset)], rtol=1e-4)  # same model, same numbers
    baseline = Rate(
        f"baseline: per-token Python loop (first {len(subset)})", naive_seconds, len(subset), megabytes(subset)
    )
    sampled_seconds, stage_seconds = stage_time(reference, scored, cfg, args.repeat)
    rates = [
        Rate("ours: QualityStage.process (all of it)", stage_seconds, len(scored), size),
        Rate("ours: the same, scores kept from the fit", sampled_seconds, len(scored), size),
        Rate("ours: ReferenceModel.perplexities", seconds, len(scored), size),
        Rate("ours, lexical model alone (before skeleton)", lexical_seconds, len(scored), size),
        Rate("SentencePiece encoding alone (the floor)", spm_seconds, len(scored), size),
        baseline,
    ]
    print_rates("perplexity scoring", rates, baseline)
    print(f"\nours with the skeleton model costs {seconds / lexical_seconds:.2f}x the lexical model alone")


def stage_time(reference: list[str], scored: list[str], cfg: QualityConfig, repeat: int) -> tuple[float, float]:
    """CPU seconds of the whole per-shard stage on the scored documents: both models per language (fitted on the
    same reference as above, read from a file), every signal, the shipped classifier, the score and buckets.
    Languages are detected beforehand, as the clean stage does in a run. Timed twice: with the fit's scores of its
    cut-off sample, which here holds every scored document (a corpus of up to `cutoff_sample_docs` documents per
    language), and without them, scoring every document (a large corpus, where the sample is a sliver)."""
    langs = [detect_language(text, LangIdConfig()).lang for text in scored]
    n = len(scored)
    table = pa.table(
        {
            "id": [f"doc-{i}" for i in range(n)],
            "text": scored,
            "source": ["bench"] * n,
            "domain": ["general"] * n,
            "location": [f"bench#{i}" for i in range(n)],
            "code_language": pa.nulls(n, pa.string()),
            "lang": langs,
            "lang_score": [1.0] * n,
            "dup_cluster": [f"doc-{i}" for i in range(n)],
            "dup_cluster_size": [1] * n,
            "pii_count": [0] * n,
            "pii_types": [[] for _ in range(n)],
        },
        schema=schema.PII,
    )
    with tempfile.TemporaryDirectory() as tmp:
        reference_file = storage.join(tmp, "reference.jsonl")
        storage.write_bytes(reference_file, "".join(json.dumps({"text": t}) + "\n" for t in reference).encode())
        shard = storage.join(tmp, "input", "part-00000.parquet")
        storage.write_parquet(shard, table)
        stage_cfg = cfg.model_copy(
            update={"prose_reference": ReferenceConfig(urls=[reference_file], domains=["general", "specialist"])}
        )
        artifacts = fit_quality([shard], stage_cfg, storage.join(tmp, "artifacts"))
        times = []
        for given in (artifacts, {name: url for name, url in artifacts.items() if name != SCORED_SAMPLE}):
            stage = QualityStage(stage_cfg, given)
            stage.process(table.slice(0, 5))  # load models and word lists outside the timing
            times.append(cpu_time(lambda stage=stage: stage.process(table), repeat)[0])
    return times[0], times[1]


if __name__ == "__main__":
    main()
