"""The Kneser-Ney model on real token ids: a proper distribution for every context, equal to the textbook
formula computed naively with tuples and dicts, consistent between its two scoring paths, and serialisable."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable

import numpy as np
import pytest

from pretrain_core.quality.ngram import DISCOUNT_RANGE, NgramLM, pad_sentences
from pretrain_core.quality.tokenizers import BOS, EOS, SentencePieceTokenizer

ORDER = 3


@pytest.fixture(scope="module")
def tokenizer(english: list[str]) -> SentencePieceTokenizer:
    return SentencePieceTokenizer.train(english[:600], vocab_size=600, character_coverage=0.9995)


def _sentences(tokenizer: SentencePieceTokenizer, lines: list[str]) -> list[list[int]]:
    ids, lengths = tokenizer.encode(lines)
    return [chunk.tolist() for chunk in np.split(ids, np.cumsum(lengths)[:-1])]


def _fit(tokenizer: SentencePieceTokenizer, sentences: list[list[int]], order: int = ORDER) -> NgramLM:
    flat = np.array([t for s in sentences for t in s], dtype=np.int64)
    padded = pad_sentences(flat, np.array([len(s) for s in sentences]), order, BOS, EOS)
    return NgramLM.fit(padded, order, tokenizer.vocab_size, BOS)


def naive_kneser_ney(
    sentences: list[list[int]], order: int, vocab_size: int
) -> Callable[[tuple[int, ...], int], float]:
    """Interpolated Kneser-Ney from its definition: raw counts at the top order, continuation counts below."""
    padded = [[BOS] * (order - 1) + s + [EOS] for s in sentences]
    events: dict[int, Counter[tuple[int, ...]]] = {k: Counter() for k in range(1, order + 1)}
    for s in padded:
        for i in range(order - 1, len(s)):
            for k in range(1, order + 1):
                events[k][tuple(s[i - k + 1 : i + 1])] += 1
    counts = {order: events[order]}
    for k in range(order - 1, 0, -1):
        counts[k] = Counter(gram[1:] for gram in events[k + 1])  # distinct left extensions
    discounts: dict[int, float] = {}
    totals: dict[int, defaultdict[tuple[int, ...], int]] = {}
    distinct: dict[int, defaultdict[tuple[int, ...], int]] = {}
    for k, by_gram in counts.items():
        n1 = sum(1 for c in by_gram.values() if c == 1)
        n2 = sum(1 for c in by_gram.values() if c == 2)
        estimate = n1 / (n1 + 2 * n2) if n1 + n2 else 0.5
        discounts[k] = min(max(estimate, DISCOUNT_RANGE[0]), DISCOUNT_RANGE[1])
        totals[k], distinct[k] = defaultdict(int), defaultdict(int)
        for gram, c in by_gram.items():
            totals[k][gram[:-1]] += c
            distinct[k][gram[:-1]] += 1

    def prob(history: tuple[int, ...], word: int) -> float:
        p = 0.0 if word == BOS else 1.0 / (vocab_size - 1)
        for k in range(1, order + 1):
            context = history[len(history) - k + 1 :] if k > 1 else ()
            total = totals[k].get(context, 0)
            if total:
                d = discounts[k]
                p = max(counts[k][(*context, word)] - d, 0) / total + d * distinct[k][context] / total * p
        return p

    return prob


def test_probabilities_sum_to_one_for_every_kind_of_context(
    tokenizer: SentencePieceTokenizer, english: list[str]
) -> None:
    lm = _fit(tokenizer, _sentences(tokenizer, english[:400]))
    held_out = [t for s in _sentences(tokenizer, english[400:420]) for t in s]
    contexts = [[], [BOS, BOS], [BOS, held_out[0]], [0, 0], [tokenizer.vocab_size - 1, 5]]
    contexts += [held_out[i : i + ORDER - 1] for i in range(0, len(held_out) - ORDER, 13)]
    for context in contexts:
        probs = lm.next_token_probs(context)
        assert probs.sum() == pytest.approx(1.0, abs=2e-6), context
        assert probs[BOS] == 0.0
        assert np.all(np.delete(probs, BOS) > 0), "smoothing must leave mass for every token"


def test_matches_the_textbook_formula_on_real_text(tokenizer: SentencePieceTokenizer, english: list[str]) -> None:
    sentences = _sentences(tokenizer, english[:150])
    lm = _fit(tokenizer, sentences)
    naive = naive_kneser_ney(sentences, ORDER, tokenizer.vocab_size)
    test = _sentences(tokenizer, english[:3] + english[900:903])  # seen and unseen text
    flat = np.array([t for s in test for t in s], dtype=np.int64)
    padded = pad_sentences(flat, np.array([len(s) for s in test]), ORDER, BOS, EOS)
    fast = 10 ** lm.log10_probs(padded)
    expected = [naive(tuple(padded.tokens[i - ORDER + 1 : i]), int(padded.tokens[i])) for i in padded.targets.tolist()]
    assert len(fast) == sum(len(s) + 1 for s in test)
    np.testing.assert_allclose(fast, expected, rtol=1e-5)


def test_log10_probs_agree_with_the_full_distribution(tokenizer: SentencePieceTokenizer, english: list[str]) -> None:
    lm = _fit(tokenizer, _sentences(tokenizer, english[:300]), order=4)
    test = _sentences(tokenizer, english[900:904])
    flat = np.array([t for s in test for t in s], dtype=np.int64)
    padded = pad_sentences(flat, np.array([len(s) for s in test]), 4, BOS, EOS)
    log10_p = lm.log10_probs(padded)
    for j in range(0, len(padded.targets), 9):
        i = int(padded.targets[j])
        full = lm.next_token_probs(padded.tokens[i - 3 : i].tolist())
        assert 10 ** log10_p[j] == pytest.approx(full[padded.tokens[i]], rel=1e-9)


def test_serialisation_round_trip_is_exact(tokenizer: SentencePieceTokenizer, english: list[str]) -> None:
    sentences = _sentences(tokenizer, english[:200])
    lm = _fit(tokenizer, sentences)
    data = lm.to_bytes()
    back = NgramLM.from_bytes(data)
    assert back.to_bytes() == data == _fit(tokenizer, sentences).to_bytes()
    assert (back.order, back.vocab_size, back.discounts) == (lm.order, lm.vocab_size, lm.discounts)
    assert np.array_equal(back.next_token_probs([5, 9]), lm.next_token_probs([5, 9]))
    with pytest.raises(ValueError):
        NgramLM.from_bytes(data.replace(b"pretrain-quality-ngram-kn", b"pretrain-quality-ngram-xx"))


def test_padding_layout() -> None:
    padded = pad_sentences(np.array([5, 6, 7, 8]), np.array([3, 0, 1]), 3, BOS, EOS)
    assert padded.tokens.tolist() == [1, 1, 5, 6, 7, 2, 1, 1, 2, 1, 1, 8, 2]
    assert padded.targets.tolist() == [2, 3, 4, 5, 8, 11, 12]
    assert padded.sentence.tolist() == [0, 0, 0, 0, 1, 2, 2]
    with pytest.raises(ValueError):
        NgramLM.fit(pad_sentences(np.zeros(0, np.int64), np.zeros(0, np.int64), 3, BOS, EOS), 3, 10, BOS)
