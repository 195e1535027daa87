"""Small probes of what a checkpoint writes and prefers (the second source article's §4.1 bias and safety checks).

- Toxicity: the share of words in seeded samples that are on a shipped list of profane and offensive English
  words (`data/probes/flagged_words_en.txt`), and how many samples hold one.
- Bias: sentence pairs that differ only in a group word ("He works as a nurse." / "She works as a nurse.");
  the gap is log p(first) - log p(second) in nats. Its mean over a language's pairs shows a systematic lean, its
  mean absolute value how strongly the model separates the two at all.

These are probes, not benchmarks: the lists are short, and a small model's figures mostly show noise.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import cache
from importlib.resources import files

import numpy as np
import sentencepiece as spm
from pydantic import BaseModel

from pretrain_core.evaluate.zero_shot import score_tokens
from pretrain_core.train.model.gpt import GPT

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")


class PairGap(BaseModel):
    pairs: int
    groups: tuple[str, str]
    mean_gap: float  # log p(first group's sentence) - log p(second's), nats
    mean_abs_gap: float
    first_preferred: float  # share of pairs where the first group's sentence is more likely


class ProbeResult(BaseModel):
    samples: int
    words: int
    flagged_words: int
    flagged_word_rate: float  # flagged words per word of the samples
    samples_with_flagged: int
    pair_gaps: dict[str, PairGap]  # per language


@cache
def flagged_words() -> frozenset[str]:
    text = files("pretrain_core").joinpath("data", "probes", "flagged_words_en.txt").read_text(encoding="utf-8")
    return frozenset(line.strip().lower() for line in text.splitlines() if line.strip())


def bias_pairs() -> dict[str, tuple[tuple[str, str], list[tuple[str, str]]]]:
    """Per language: the two group words and every filled sentence pair."""
    data = json.loads(files("pretrain_core").joinpath("data", "probes", "bias_pairs.json").read_text(encoding="utf-8"))
    pairs = {}
    for language, spec in data["languages"].items():
        first, second = spec["groups"]
        filled = [
            (template.format(group=first, occupation=job), template.format(group=second, occupation=job))
            for template in spec["templates"]
            for job in spec["occupations"]
        ]
        pairs[language] = ((first, second), filled)
    return pairs


def flagged_in(text: str) -> tuple[int, int]:
    """(flagged words, words) of a text; a listed phrase of several words counts once per occurrence."""
    words = [w.lower() for w in _WORD.findall(text)]
    listed = flagged_words()
    longest = max(len(entry.split()) for entry in listed)
    found = sum(" ".join(words[i : i + n]) in listed for n in range(1, longest + 1) for i in range(len(words) - n + 1))
    return found, len(words)


def sentence_logprob(model: GPT, tokenizer: spm.SentencePieceProcessor, sentence: str) -> float:
    """log p(sentence) as the start of a document (after the end-of-document id every document follows)."""
    return score_tokens(model, [max(tokenizer.eos_id(), 0), *tokenizer.encode(sentence)], 1)[0]


def run_probes(model: GPT, tokenizer: spm.SentencePieceProcessor, samples: Sequence[str]) -> ProbeResult:
    counts = np.array([flagged_in(text) for text in samples]).reshape(-1, 2)
    gaps = {}
    for language, (groups, pairs) in bias_pairs().items():
        diffs = np.array(
            [sentence_logprob(model, tokenizer, a) - sentence_logprob(model, tokenizer, b) for a, b in pairs]
        )
        gaps[language] = PairGap(
            pairs=len(pairs),
            groups=groups,
            mean_gap=float(diffs.mean()),
            mean_abs_gap=float(np.abs(diffs).mean()),
            first_preferred=float((diffs > 0).mean()),
        )
    flagged, words = int(counts[:, 0].sum()), int(counts[:, 1].sum())
    return ProbeResult(
        samples=len(samples),
        words=words,
        flagged_words=flagged,
        flagged_word_rate=flagged / words if words else 0.0,
        samples_with_flagged=int((counts[:, 0] > 0).sum()),
        pair_gaps=gaps,
    )
