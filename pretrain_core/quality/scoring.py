"""Document perplexity under a reference model, computed as CCNet does: over the document's lines, each a
sentence ending in `</s>`, ``10 ** (-sum(log10 p) / sum(tokens + 1))``. Whole batches go through one
tokeniser call and one vectorised n-gram pass; there is no per-token Python.

A model with a skeleton (see skeleton.py) scores each document twice, by its lexical tokens and by its word
skeleton, and reports the weighted geometric mean of the two perplexities: the lexical one says how familiar the
text is, the skeleton one whether its words are in an order the reference's syntax allows. The skeleton's ids
also say how much of a document its kept words are (`Components.kept_share`), a signal of its own."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from pretrain_core.batches import char_batches
from pretrain_core.quality.ngram import NgramLM, pad_sentences
from pretrain_core.quality.sampling import fold_of
from pretrain_core.quality.skeleton import SkeletonTokenizer
from pretrain_core.quality.tokenizers import Tokenizer


def split_lines(text: str) -> list[str]:
    """The lines a document is scored by: blank lines carry no evidence and are skipped; an empty document is
    scored as one empty line (just `</s>`), so every document has a finite perplexity."""
    return [line for line in text.splitlines() if line.strip()] or [""]


class Components(NamedTuple):
    """Per document: log10 perplexity under the lexical and the skeleton model, and the share of its skeleton tokens
    that are kept words (both NaN for a model without a skeleton)."""

    lexical: np.ndarray
    skeleton: np.ndarray
    kept_share: np.ndarray

    def combined(self, model: Skeleton | None) -> np.ndarray:
        return combine(self.lexical, self.skeleton, model)


@dataclass(frozen=True)
class Skeleton:
    """The skeleton tokeniser, the n-gram model over its ids, and its weight in the document's perplexity."""

    tokenizer: SkeletonTokenizer
    lm: NgramLM
    weight: float


@dataclass(frozen=True)
class ReferenceModel:
    """A tokeniser and the n-gram model trained on its ids, optionally with a skeleton model beside them."""

    tokenizer: Tokenizer
    lm: NgramLM
    skeleton: Skeleton | None = None

    def perplexities(self, texts: list[str], batch_chars: int = 4_000_000) -> np.ndarray:
        """Perplexity of each text, as float32: the precision it is stored and compared against cut-offs in."""
        return self.components(texts, batch_chars).combined(self.skeleton)

    def components(self, texts: list[str], batch_chars: int = 4_000_000) -> Components:
        """log10 perplexity of each text under the lexical and the skeleton model, and its kept-word share."""
        lexical = np.empty(len(texts))
        skeleton, kept_share = np.full(len(texts), np.nan), np.full(len(texts), np.nan)
        for start, stop in char_batches(texts, batch_chars):
            lexical[start:stop], skeleton[start:stop], kept_share[start:stop] = self._score_batch(texts[start:stop])
        return Components(lexical, skeleton, kept_share)

    def _score_batch(self, texts: list[str]) -> Components:
        lines, docs = lines_of(texts)
        lexical = -_mean_log10_prob(self.tokenizer, self.lm, *self.tokenizer.encode(lines), docs, len(texts))
        skeleton, kept_share = np.full(len(texts), np.nan), np.full(len(texts), np.nan)
        if self.skeleton is not None:
            ids, lengths = self.skeleton.tokenizer.encode(lines)
            skeleton = -_mean_log10_prob(self.skeleton.tokenizer, self.skeleton.lm, ids, lengths, docs, len(texts))
            # blank lines hold no tokens and every line break is whitespace: these are the document's own tokens
            kept_share = self.skeleton.tokenizer.kept_shares(ids, np.repeat(docs, lengths), len(texts))
        return Components(lexical, skeleton, kept_share)


def combine(lexical: np.ndarray, skeleton: np.ndarray, model: Skeleton | None) -> np.ndarray:
    """The stored perplexity from the two log10 perplexities: their weighted geometric mean, as float32 (the
    precision it is stored and compared against cut-offs in)."""
    log10_ppl = lexical
    if model is not None and model.weight > 0:
        log10_ppl = (lexical + model.weight * skeleton) / (1.0 + model.weight)
    return np.power(10.0, log10_ppl).astype(np.float32)


def _mean_log10_prob(
    tokenizer: Tokenizer, lm: NgramLM, ids: np.ndarray, lengths: np.ndarray, doc_of_line: np.ndarray, docs: int
) -> np.ndarray:
    """Mean log10 probability per predicted token (every token and each line's `</s>`) of each document, from its
    lines' ids."""
    sentences = pad_sentences(ids, lengths, lm.order, tokenizer.bos, tokenizer.eos)
    log10_p = lm.log10_probs(sentences)
    doc_of_target = doc_of_line[sentences.sentence]
    total = np.bincount(doc_of_target, weights=log10_p, minlength=docs)
    count = np.bincount(doc_of_target, minlength=docs)
    return total / count


@dataclass(frozen=True)
class FoldedModel:
    """The parts of one named model. Cross-fitted, there are two: part f was trained without the input documents
    of fold f and scores exactly those, so no document is scored by a model that memorised it. Otherwise a
    single part scores everything."""

    parts: tuple[ReferenceModel, ...]
    seed: int

    def perplexities(self, doc_ids: list[str], texts: list[str], batch_chars: int) -> np.ndarray:
        return self.components(doc_ids, texts, batch_chars).combined(self.parts[0].skeleton)

    def components(self, doc_ids: list[str], texts: list[str], batch_chars: int) -> Components:
        """Each text's components (`ReferenceModel.components`), each scored by the part that never saw it."""
        if len(self.parts) == 1:
            return self.parts[0].components(texts, batch_chars)
        folds = np.array([fold_of(self.seed, doc_id) for doc_id in doc_ids], dtype=np.int64)
        out = Components(np.empty(len(texts)), np.empty(len(texts)), np.empty(len(texts)))
        for fold, model in enumerate(self.parts):
            rows = np.flatnonzero(folds == fold)
            for mine, theirs in zip(out, model.components([texts[r] for r in rows], batch_chars), strict=True):
                mine[rows] = theirs
        return out


def lines_of(texts: list[str]) -> tuple[list[str], np.ndarray]:
    """Every document's scored lines in one list, and the document of each line."""
    lines: list[str] = []
    docs: list[int] = []
    for doc, text in enumerate(texts):
        doc_lines = split_lines(text)
        lines += doc_lines
        docs += [doc] * len(doc_lines)
    return lines, np.asarray(docs, dtype=np.int64)
