"""How varied and how repetitive generated text is, on token ids (so any tokenizer and any language)."""

from __future__ import annotations

from collections.abc import Sequence


def _ngrams(ids: Sequence[int], n: int) -> list[tuple[int, ...]]:
    return [tuple(ids[i : i + n]) for i in range(len(ids) - n + 1)]


def distinct_n(texts: Sequence[Sequence[int]], n: int) -> float:
    """Distinct-n (Li et al. 2016): unique n-grams over all n-grams of the samples; 1 = nothing repeats."""
    grams = [gram for ids in texts for gram in _ngrams(ids, n)]
    return len(set(grams)) / len(grams) if grams else 0.0


def repeated_ngram_rate(ids: Sequence[int], n: int) -> float:
    """Share of a text's n-grams that already occurred earlier in it: the loops greedy decoding falls into."""
    grams = _ngrams(ids, n)
    seen: set[tuple[int, ...]] = set()
    repeats = 0
    for gram in grams:
        repeats += gram in seen
        seen.add(gram)
    return repeats / len(grams) if grams else 0.0
