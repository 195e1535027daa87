"""Throughput of perplexity scoring: ours against KenLM querying the same model, against a per-token Python loop
over it, and against SentencePiece encoding alone (the floor all of them pay), on the same documents.

Ours (`ReferenceModel.perplexities`): one SentencePiece call per batch of lines, then n-gram hashes, table
lookups and Kneser-Ney interpolation as whole-array numpy operations, for the lexical model and for the skeleton
model (the same text as kept words and word shapes, see pretrain_core/quality/skeleton.py), whose perplexities
the stage combines. The lexical model alone is timed too: it is the model KenLM is given.

Peer: KenLM (the `kenlm` package, which has no `lmplz`) loads an ARPA file written from our fitted lexical model
(`KenLMScorer`), so it holds the same n-grams and probabilities; it reads the same SentencePiece ids as words and
scores each line with `Model.score`. Its perplexities must equal ours. The n-gram query alone is compared too,
from ids (ours) and prepared lines (KenLM). Baseline: the same tokeniser and lexical model held in Python dicts,
with the hashes and the interpolation computed token by token (a straightforward port of KenLM's query loop);
its perplexities must equal ours as well.

The whole per-shard stage (`QualityStage.process`: both models, every signal, the shipped classifier, the score)
is timed too, on the same documents with the same reference: scoring every document, and taking the scores the fit
kept of its cut-off sample (which here holds every scored document, as on a corpus of up to `cutoff_sample_docs`
documents per language).

Documents: the prose (every domain but code) of the demo corpus as ingest hands it on (with --reference, the
repository's reference text). Even documents train the reference model, odd ones are scored. Rates are per core:
CPU seconds of this single-threaded process, the best of `--repeat` runs.

    python benchmarks/bench_quality.py
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import functools
import json
import tempfile
from importlib.metadata import version

import kenlm
import numpy as np
import pyarrow as pa
from corpus import load_documents, megabytes, spread
from timing import Rate, cpu_time, print_rates

from pretrain_core import schema, storage
from pretrain_core.clean.config import LangIdConfig
from pretrain_core.clean.langid import detect_language
from pretrain_core.licences import NOASSERTION
from pretrain_core.quality.config import QualityConfig, ReferenceConfig
from pretrain_core.quality.ngram import EMPTY_CONTEXT, NgramLM, PaddedSentences, gram_keys, pad_sentences
from pretrain_core.quality.reference import reference_lines, train_reference_model
from pretrain_core.quality.scoring import ReferenceModel, lines_of, split_lines
from pretrain_core.quality.stage import SCORED_SAMPLE, QualityStage, fit_quality

MASK = (1 << 64) - 1
MUL, MIX1, MIX2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB
UNKNOWN = -1  # KenLM's <unk> in the ARPA entries: every token id the reference never had


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


class KenLMScorer:
    """Our fitted lexical model written as an ARPA file and queried by KenLM, with the same tokeniser.

    Interpolated Kneser-Ney is a back-off model: a seen n-gram's ARPA entry is its full interpolated log10
    probability, a context's back-off weight log10 gamma, so KenLM gives our probabilities. Our sentences start
    with order-1 `<s>` and KenLM's with one: an n-gram whose history starts with padding is written with a single
    `<s>`, its probability taken at full padding and its back-off the sum over the padded contexts it stands for
    (`<s>` is only ever padding, so those contexts come one inside the other). Token ids are KenLM's words.
    """

    def __init__(self, model: ReferenceModel, reference: list[str], workdir: str) -> None:
        self.tokenizer, self.lm = model.tokenizer, model.lm
        self.words = np.array([str(i) for i in range(self.lm.vocab_size)], dtype=object)
        self.words[[self.tokenizer.bos, self.tokenizer.eos]] = ["<s>", "</s>"]
        path = os.path.join(workdir, "reference.arpa")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(self.arpa(reference))
        config = kenlm.Config()
        config.show_progress = False
        self.model = kenlm.Model(path, config)

    def arpa(self, reference: list[str]) -> str:
        """The ARPA text of every n-gram our tables hold, found again in the reference it was fitted on."""
        lm, bos = self.lm, self.tokenizer.bos
        ids, lengths = self.tokenizer.encode(reference_lines(reference))
        tokens = pad_sentences(ids, lengths, lm.order, bos, self.tokenizer.eos).tokens
        keys = gram_keys(tokens, lm.order, bos)
        entries: dict[tuple[int, ...], list[float]] = {(bos,): [-99.0, 0.0]}  # n-gram -> [log10 p, log10 back-off]
        for m in range(1, lm.order + 1):
            positions, rows = self.held(keys[m], m)
            log10_p = self.log10_probs(m, tokens, positions)
            log10_gamma = np.log10(lm.gamma[m - 1][rows].astype(np.float64))
            starts = positions[:, None] + np.arange(1 - m, 1)
            grams = np.where(starts >= 0, tokens[np.maximum(starts, 0)], bos).tolist()
            for gram, prob, back in zip(grams, log10_p.tolist(), log10_gamma.tolist(), strict=True):
                padded = gram[0] == bos
                entry = entries.setdefault((bos, *[t for t in gram if t != bos]) if padded else tuple(gram), [0.0, 0.0])
                if not padded or m == lm.order:
                    entry[0] = prob
                if m < lm.order:
                    entry[1] += back
        entries[(UNKNOWN,)] = [float(np.log10(lm.gamma0 / (lm.vocab_size - 1))), 0.0]
        return self.format(entries)

    def held(self, keys: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
        """A position of each distinct m-gram of the reference that the model's m-gram table holds, and its row."""
        grams, positions = np.unique(keys, return_index=True)
        table = self.lm.keys[m - 1]
        rows = np.minimum(np.searchsorted(table, grams), len(table) - 1)
        found = table[rows] == grams
        return positions[found], rows[found]

    def log10_probs(self, m: int, tokens: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """log10 P of the m-gram ending at each position under the model cut to order m (0 where it is padding)."""
        lm = self.lm
        cut = NgramLM(m, lm.vocab_size, lm.bos, lm.discounts[:m], lm.gamma0, lm.keys[:m], lm.alpha[:m], lm.gamma[:m])
        real = tokens[positions] != lm.bos
        log10_p = np.zeros(len(positions))
        log10_p[real] = cut.log10_probs(PaddedSentences(tokens, positions[real], np.zeros(int(real.sum()), np.int64)))
        return log10_p

    def format(self, entries: dict[tuple[int, ...], list[float]]) -> str:
        """The ARPA text: n-gram counts, then each order's entries, with back-offs below the top order."""
        by_order: dict[int, list[str]] = {}
        for gram, (prob, back) in sorted(entries.items(), key=lambda item: len(item[0])):
            words = " ".join("<unk>" if t == UNKNOWN else self.words[t] for t in gram)
            tail = f"\t{back:.7g}" if len(gram) < self.lm.order else ""
            by_order.setdefault(len(gram), []).append(f"{prob:.7g}\t{words}{tail}")
        counts = [f"ngram {n}={len(lines)}" for n, lines in by_order.items()]
        sections = [f"\\{n}-grams:\n" + "\n".join(lines) + "\n" for n, lines in by_order.items()]
        return "\\data\\\n" + "\n".join(counts) + "\n\n" + "\n".join(sections) + "\n\\end\\\n"

    def sentences(self, lines: list[str]) -> tuple[list[str], np.ndarray]:
        """Each line as KenLM reads it (our tokeniser's ids as words, space-separated), and its number of tokens."""
        ids, lengths = self.tokenizer.encode(lines)
        return [" ".join(words) for words in np.split(self.words[ids], np.cumsum(lengths)[:-1])], lengths

    def scores(self, sentences: list[str]) -> np.ndarray:
        """log10 probability of each sentence, `</s>` included."""
        score = self.model.score
        return np.array([score(sentence, bos=True, eos=True) for sentence in sentences])

    def perplexities(self, texts: list[str]) -> np.ndarray:
        """The whole path per document: lines, tokens, KenLM's scores, 10 ** -(mean log10 p)."""
        lines, docs = lines_of(texts)
        sentences, lengths = self.sentences(lines)
        total = np.bincount(docs, weights=self.scores(sentences), minlength=len(texts))
        predicted = np.bincount(docs, weights=lengths + 1, minlength=len(texts))  # each line's tokens and `</s>`
        return np.power(10.0, -total / predicted)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-docs", type=int, default=1500, help="documents loaded (half train, half scored)")
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

    with tempfile.TemporaryDirectory() as workdir:
        arpa_seconds, kenlm_scorer = cpu_time(lambda: KenLMScorer(model, reference, workdir))
    print(f"KenLM {version('kenlm')}: our lexical model as ARPA, written and loaded in {arpa_seconds:.1f} CPU s")
    scoring(model, kenlm_scorer, reference, scored, cfg, args.repeat)
    query_alone(model, kenlm_scorer, scored, args.repeat)


def scoring(
    model: ReferenceModel,
    kenlm_scorer: KenLMScorer,
    reference: list[str],
    scored: list[str],
    cfg: QualityConfig,
    repeat: int,
) -> None:
    """Texts to perplexities, every implementation on every scored document."""
    lexical = ReferenceModel(model.tokenizer, model.lm)  # the stage before the skeleton model
    model.perplexities(scored[:5])  # build the lookup tables outside the timing, as a warm worker would have
    size, n = megabytes(scored), len(scored)
    seconds, _ = cpu_time(lambda: model.perplexities(scored), repeat)
    lexical_seconds, ours = cpu_time(lambda: lexical.perplexities(scored), repeat)
    lines = lines_of(scored)[0]
    spm_seconds, _ = cpu_time(lambda: model.tokenizer.encode(lines), repeat)
    kenlm_seconds, theirs = cpu_time(lambda: kenlm_scorer.perplexities(scored), repeat)
    np.testing.assert_allclose(theirs, ours, rtol=1e-4)  # same model, same numbers
    naive = NaiveScorer(lexical)
    naive_seconds, slow = cpu_time(lambda: [naive.perplexity(t) for t in scored], repeat)
    np.testing.assert_allclose(slow, ours, rtol=1e-4)
    sampled_seconds, stage_seconds = stage_time(reference, scored, cfg, repeat)
    peer = Rate("KenLM: same tokens, Model.score per line", kenlm_seconds, n, size)
    rates = [
        Rate("ours: QualityStage.process (all of it)", stage_seconds, n, size),
        Rate("ours: the same, scores kept from the fit", sampled_seconds, n, size),
        Rate("ours: ReferenceModel.perplexities", seconds, n, size),
        Rate("ours: lexical model alone (what KenLM holds)", lexical_seconds, n, size),
        peer,
        Rate("per-token Python loop, same model", naive_seconds, n, size),
        Rate("SentencePiece encoding alone (the floor)", spm_seconds, n, size),
    ]
    print_rates("perplexity scoring, texts to perplexities (ratios against KenLM)", rates, peer)
    print(f"\nours with the skeleton model costs {seconds / lexical_seconds:.2f}x the lexical model alone")


def query_alone(model: ReferenceModel, kenlm_scorer: KenLMScorer, scored: list[str], repeat: int) -> None:
    """The n-gram look-ups alone, from tokens each implementation reads: ids for ours, strings for KenLM."""
    lines = lines_of(scored)[0]
    ids, lengths = model.tokenizer.encode(lines)
    sentences, _ = kenlm_scorer.sentences(lines)
    lm, bos, eos = model.lm, model.tokenizer.bos, model.tokenizer.eos
    ours_seconds, _ = cpu_time(lambda: lm.log10_probs(pad_sentences(ids, lengths, lm.order, bos, eos)), repeat)
    kenlm_seconds, _ = cpu_time(lambda: kenlm_scorer.scores(sentences), repeat)
    size, n = megabytes(scored), len(scored)
    peer = Rate("KenLM: Model.score per line", kenlm_seconds, n, size)
    rates = [Rate("ours: pad_sentences + NgramLM.log10_probs", ours_seconds, n, size), peer]
    tokens = int(lengths.sum()) + len(lines)
    print_rates(f"n-gram query alone, {tokens:,} predicted tokens (ratio against KenLM)", rates, peer)
    print(f"  Mtokens/s: ours {tokens / ours_seconds / 1e6:.2f}, KenLM {tokens / kenlm_seconds / 1e6:.2f}")


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
            "licence": [NOASSERTION] * n,
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
            times.append(cpu_time(functools.partial(stage.process, table), repeat)[0])
    return times[0], times[1]


if __name__ == "__main__":
    main()
