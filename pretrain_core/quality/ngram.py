"""An interpolated Kneser-Ney n-gram language model over token ids, fitted and scored with numpy.

N-grams are identified by 64-bit hashes of their token ids (a collision between two of the ~10^7 n-grams of a
reference corpus has probability ~10^-5, and its only effect is a merged count). For every length m the model
keeps one table of m-grams with two numbers each, following Chen & Goodman's interpolated Kneser-Ney:

    P_k(w | h) = alpha_k(h w) + gamma_k(h) * P_{k-1}(w | h[1:]),     P_0(w) = 1 / |V \\ {<s>}|
    alpha_k(h w) = max(c_k(h w) - D_k, 0) / c_k(h .)      gamma_k(h) = D_k * N1+(h .) / c_k(h .)

where c_n are raw counts at the top order and c_k (k < n) are continuation counts N1+(. h w); an unseen
context has alpha = 0 and gamma = 1. Each sentence is padded with order-1 `<s>` so every n-gram, including the
first of a sentence, has a full history: lower orders are then uniformly continuation counts, and for every
context the probabilities of all tokens but `<s>` sum to exactly 1 (tested).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from pretrain_core.quality.arrayfile import pack_arrays, unpack_arrays
from pretrain_core.quality.lookup import KeyTable

FORMAT = "pretrain-quality-ngram-kn"
EMPTY_CONTEXT = np.uint64(0x243F6A8885A308D3)  # hash of the zero-length n-gram
_MUL = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
DISCOUNT_RANGE = (0.05, 0.95)  # keeps every context's back-off mass positive, so no token gets probability 0


def extend_left(keys: np.ndarray, tokens: np.ndarray) -> np.ndarray:
    """Hash of each n-gram grown by one token on the left (SplitMix64 finaliser); odd, so never 0."""
    x = (keys * _MUL) ^ (tokens.astype(np.uint64) + np.uint64(1))
    x ^= x >> np.uint64(30)
    x *= _MIX1
    x ^= x >> np.uint64(27)
    x *= _MIX2
    x ^= x >> np.uint64(31)
    return x | np.uint64(1)


def gram_keys(tokens: np.ndarray, order: int, pad: int) -> list[np.ndarray]:
    """``keys[m][i]``: hash of the m-gram ending at position i, m = 0..order (history before 0 reads as ``pad``)."""
    keys = [np.full(len(tokens), EMPTY_CONTEXT, dtype=np.uint64)]
    for m in range(1, order + 1):
        shifted = np.full(len(tokens), pad, dtype=np.int64)
        shifted[m - 1 :] = tokens[: len(tokens) - m + 1]
        keys.append(extend_left(keys[-1], shifted))
    return keys


@dataclass(frozen=True)
class PaddedSentences:
    """Sentences laid out for n-gram work: each is order-1 `<s>`, its tokens, then `</s>`."""

    tokens: np.ndarray  # int64 token ids
    targets: np.ndarray  # positions of the predicted tokens: every sentence token and each `</s>`
    sentence: np.ndarray  # sentence index of each target


def pad_sentences(ids: np.ndarray, lengths: np.ndarray, order: int, bos: int, eos: int) -> PaddedSentences:
    """Lay out sentences given as one flat id array and per-sentence lengths."""
    lengths = np.asarray(lengths, dtype=np.int64)
    starts = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1] + order, out=starts[1:])
    tokens = np.full(int(lengths.sum()) + order * len(lengths), bos, dtype=np.int64)
    is_pad = np.zeros(len(tokens), dtype=bool)
    is_pad[(starts[:, None] + np.arange(order - 1)).ravel()] = True
    targets = np.flatnonzero(~is_pad)
    tokens[targets] = np.insert(np.asarray(ids, dtype=np.int64), np.cumsum(lengths), eos)
    return PaddedSentences(tokens, targets, np.repeat(np.arange(len(lengths)), lengths + 1))


class NgramLM:
    """Interpolated Kneser-Ney model; build with `fit` or `from_bytes`. Arrays are per m-gram length m = 1..order."""

    def __init__(
        self,
        order: int,
        vocab_size: int,
        bos: int,
        discounts: list[float],
        gamma0: float,
        keys: list[np.ndarray],
        alpha: list[np.ndarray],
        gamma: list[np.ndarray],
    ) -> None:
        self.order, self.vocab_size, self.bos = order, vocab_size, bos
        self.discounts, self.gamma0 = discounts, gamma0
        self.keys, self.alpha, self.gamma = keys, alpha, gamma  # gamma[m-1]: the m-gram as context of order m+1

    @cached_property
    def _tables(self) -> list[KeyTable]:
        return [KeyTable(k) for k in self.keys]

    @property
    def n_grams(self) -> int:
        return sum(len(k) for k in self.keys)

    # -- fitting -----------------------------------------------------------------------------------------------

    @classmethod
    def fit(cls, sentences: PaddedSentences, order: int, vocab_size: int, bos: int) -> NgramLM:
        """Count, discount and normalise in one vectorised pass per order."""
        if not len(sentences.targets):
            raise ValueError("cannot fit a language model on no tokens")
        keys = gram_keys(sentences.tokens, order, bos)
        targets = sentences.targets
        events = [keys[k][targets] for k in range(order + 1)]  # events[k]: the k-gram ending at each target
        contexts = [events[0]] + [keys[k - 1][targets - 1] for k in range(1, order + 1)]  # of the k-gram events
        alphas: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        gammas: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        discounts: list[float] = [0.0] * order
        first_of_longer = np.zeros(0, dtype=np.int64)
        for k in range(order, 0, -1):
            grams, first, raw = np.unique(events[k], return_index=True, return_counts=True)
            if k < order:  # continuation count: distinct one-token-longer n-grams ending in this one
                suffixes, continuation = np.unique(events[k][first_of_longer], return_counts=True)
                if not np.array_equal(suffixes, grams):
                    raise AssertionError("continuation counts do not cover every n-gram")
                raw = continuation
            first_of_longer = first
            counts = raw.astype(np.float64)
            discount = _discount(raw)
            discounts[k - 1] = discount
            ctx, inverse = np.unique(contexts[k][first], return_inverse=True)
            totals = np.bincount(inverse, weights=counts)
            alphas[k] = (grams, (counts - discount) / totals[inverse])
            gammas[k - 1] = (ctx, discount * np.bincount(inverse) / totals)
        gamma0 = float(gammas.pop(0)[1][0])
        table_keys, table_alpha, table_gamma = [], [], []
        for m in range(1, order + 1):
            grams, alpha = alphas[m]
            ctx, gamma = gammas.get(m, (np.zeros(0, dtype=np.uint64), np.zeros(0)))
            union = _sorted_union(grams, ctx)
            full_alpha = np.zeros(len(union), dtype=np.float32)
            full_alpha[np.searchsorted(union, grams)] = alpha
            full_gamma = np.ones(len(union), dtype=np.float32)
            full_gamma[np.searchsorted(union, ctx)] = gamma
            table_keys.append(union)
            table_alpha.append(full_alpha)
            table_gamma.append(full_gamma)
        return cls(order, vocab_size, bos, discounts, gamma0, table_keys, table_alpha, table_gamma)

    # -- scoring -----------------------------------------------------------------------------------------------

    def log10_probs(self, sentences: PaddedSentences) -> np.ndarray:
        """log10 P(token | history) of every target, in target order."""
        tokens, targets = sentences.tokens, sentences.targets
        terms_alpha, terms_gamma = [], [np.full(len(targets), self.gamma0)]
        # Unigrams are found by token id; each longer m-gram is hashed and looked up only where the (m-1)-gram
        # ending at the same position was found: every m-gram in a table extends one in the (m-1) table.
        index = self._unigram_index[tokens]
        candidates = np.flatnonzero(index >= 0)
        index = index[candidates]
        keys = extend_left(np.full(len(candidates), EMPTY_CONTEXT, dtype=np.uint64), tokens[candidates])
        for m in range(1, self.order + 1):
            if m > 1:
                back = candidates - (m - 1)
                keys = extend_left(keys, np.where(back >= 0, tokens[np.maximum(back, 0)], self.bos))
                index = self._tables[m - 1].find(keys)
                hit = index >= 0
                candidates, index, keys = candidates[hit], index[hit], keys[hit]
            alpha = np.zeros(len(tokens), dtype=np.float32)
            alpha[candidates] = self.alpha[m - 1][index]
            terms_alpha.append(alpha[targets])
            if m < self.order:
                gamma = np.ones(len(tokens), dtype=np.float32)
                gamma[candidates] = self.gamma[m - 1][index]
                terms_gamma.append(gamma[targets - 1])
        return np.log10(self._interpolate(terms_alpha, terms_gamma, np.full(len(targets), self._base)))

    @cached_property
    def _unigram_index(self) -> np.ndarray:
        """Row of each token id in the unigram table, or -1."""
        vocab = np.arange(self.vocab_size, dtype=np.int64)
        return self._tables[0].find(extend_left(np.full(self.vocab_size, EMPTY_CONTEXT, dtype=np.uint64), vocab))

    def next_token_probs(self, context: Sequence[int]) -> np.ndarray:
        """P(w | context) for every token id w (0 for `<s>`): the full distribution, for inspection and tests."""
        history = [self.bos] * (self.order - 1) + list(context)
        vocab = np.arange(self.vocab_size, dtype=np.int64)
        gram = np.full(self.vocab_size, EMPTY_CONTEXT, dtype=np.uint64)
        ctx = np.array([EMPTY_CONTEXT], dtype=np.uint64)
        terms_alpha, terms_gamma = [], [np.full(self.vocab_size, self.gamma0)]
        for m in range(1, self.order + 1):
            gram = extend_left(gram, vocab if m == 1 else np.full(self.vocab_size, history[-(m - 1)]))
            index = self._tables[m - 1].find(gram)
            terms_alpha.append(np.where(index >= 0, self.alpha[m - 1][np.maximum(index, 0)], 0.0))
            if m < self.order:
                ctx = extend_left(ctx, np.array([history[-m]]))
                found = self._tables[m - 1].find(ctx)[0]
                terms_gamma.append(np.full(self.vocab_size, self.gamma[m - 1][found] if found >= 0 else 1.0))
        base = np.full(self.vocab_size, self._base)
        base[self.bos] = 0.0
        return self._interpolate(terms_alpha, terms_gamma, base)

    @property
    def _base(self) -> float:
        return 1.0 / (self.vocab_size - 1)  # uniform over every token but `<s>`, which is never predicted

    @staticmethod
    def _interpolate(alphas: list[np.ndarray], gammas: list[np.ndarray], base: np.ndarray) -> np.ndarray:
        """P_k = alpha_k + gamma_k * P_{k-1}, from the uniform base up to the model order."""
        prob = base.astype(np.float64)
        for alpha, gamma in zip(alphas, gammas, strict=True):
            prob = alpha.astype(np.float64) + gamma * prob
        return prob

    # -- serialisation -----------------------------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        meta: dict[str, Any] = {
            "format": FORMAT,
            "order": self.order,
            "vocab_size": self.vocab_size,
            "bos": self.bos,
            "discounts": self.discounts,
            "gamma0": self.gamma0,
        }
        arrays: dict[str, np.ndarray] = {}
        for m in range(1, self.order + 1):
            arrays[f"keys_{m}"] = self.keys[m - 1]
            arrays[f"alpha_{m}"] = self.alpha[m - 1]
            arrays[f"gamma_{m}"] = self.gamma[m - 1]
        return pack_arrays(meta, arrays)

    @classmethod
    def from_bytes(cls, data: bytes) -> NgramLM:
        meta, arrays = unpack_arrays(data)
        if meta.get("format") != FORMAT:
            raise ValueError(f"not a {FORMAT} model: {meta.get('format')!r}")
        order = int(meta["order"])
        return cls(
            order,
            int(meta["vocab_size"]),
            int(meta["bos"]),
            [float(d) for d in meta["discounts"]],
            float(meta["gamma0"]),
            [arrays[f"keys_{m}"] for m in range(1, order + 1)],
            [arrays[f"alpha_{m}"] for m in range(1, order + 1)],
            [arrays[f"gamma_{m}"] for m in range(1, order + 1)],
        )


def _sorted_union(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Union of two sorted distinct arrays (np.union1d hashes, which is slower on millions of uint64 keys)."""
    merged = np.concatenate([a, b])
    merged.sort(kind="stable")
    return merged[np.concatenate([[True], merged[1:] != merged[:-1]])] if len(merged) else merged


def _discount(counts: np.ndarray) -> float:
    """Ney's estimate D = n1 / (n1 + 2 n2) from the counts of count 1 and 2, clipped to DISCOUNT_RANGE."""
    n1, n2 = int(np.sum(counts == 1)), int(np.sum(counts == 2))
    estimate = n1 / (n1 + 2 * n2) if n1 + n2 else 0.5
    return min(max(estimate, DISCOUNT_RANGE[0]), DISCOUNT_RANGE[1])
