from __future__ import annotations

import math

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from pretrain_core.generate.processors import penalize_repetition, top_k_filter, top_p_filter
from pretrain_core.generate.text_metrics import distinct_n, repeated_ngram_rate


def kept(logits: torch.Tensor) -> list[int]:
    return torch.isfinite(logits[0]).nonzero()[:, 0].tolist()


def test_top_p_keeps_the_smallest_set_that_reaches_p() -> None:
    logits = torch.log(torch.tensor([[0.15, 0.5, 0.05, 0.3]]))
    assert kept(top_p_filter(logits, 0.5)) == [1]
    assert kept(top_p_filter(logits, 0.79)) == [1, 3]
    assert kept(top_p_filter(logits, 0.81)) == [0, 1, 3]
    assert kept(top_p_filter(logits, 1.0)) == [0, 1, 2, 3]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(-8, 8, allow_nan=False), min_size=2, max_size=30),
    st.floats(0.01, 0.99),
)
def test_top_p_mass_reaches_p_and_no_smaller_set_would(values: list[float], p: float) -> None:
    logits = torch.tensor([values], dtype=torch.float64)
    probs = torch.softmax(logits, dim=-1)[0]
    chosen = kept(top_p_filter(logits, p))
    mass = float(probs[chosen].sum())
    assert mass >= p - 1e-9
    assert mass - float(probs[chosen].min()) < p + 1e-9  # without its least likely token it falls short
    # every kept token is at least as likely as every dropped one
    dropped = [i for i in range(len(values)) if i not in chosen]
    if dropped:
        assert float(probs[chosen].min()) >= float(probs[dropped].max())


def test_top_k_keeps_k_tokens() -> None:
    logits = torch.tensor([[0.1, 3.0, -1.0, 2.0, 0.5]])
    assert kept(top_k_filter(logits, 2)) == [1, 3]
    assert kept(top_k_filter(logits, 9)) == [0, 1, 2, 3, 4]


def test_repetition_penalty_lowers_only_seen_tokens_whatever_their_sign() -> None:
    logits = torch.tensor([[2.0, -2.0, 2.0, -2.0]])
    seen = torch.tensor([[True, True, False, False]])
    assert penalize_repetition(logits, seen, 2.0).tolist() == [[1.0, -4.0, 2.0, -2.0]]
    assert torch.equal(penalize_repetition(logits, seen, 1.0), logits)


def test_text_metrics() -> None:
    assert repeated_ngram_rate([1, 2, 3, 1, 2, 3, 1, 2], 3) == 3 / 6  # 123 231 312 123 231 312
    assert repeated_ngram_rate([1, 2, 3, 4], 2) == 0.0 and repeated_ngram_rate([1], 2) == 0.0
    assert distinct_n([[1, 2, 1, 2], [1, 2]], 2) == 2 / 4
    assert math.isclose(distinct_n([[1, 2, 3]], 1), 1.0)
