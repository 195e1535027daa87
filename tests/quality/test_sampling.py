"""Seeded hash samples: exactly the smallest hashes, independent of arrival order, bounded as promised."""

from __future__ import annotations

import random

from pretrain_core.quality.sampling import HashSample, seeded_hash


def test_seeded_hash_depends_on_seed_purpose_and_key_only() -> None:
    assert seeded_hash(0, "ref", "doc-1") == seeded_hash(0, "ref", "doc-1")
    assert len({seeded_hash(s, p, k) for s in (0, 1) for p in ("ref", "cut") for k in ("a", "b")}) == 8
    assert 0 <= seeded_hash(3, "ref", "文档") < 2**64


def test_unit_weights_give_the_bottom_k_in_any_arrival_order() -> None:
    keys = [f"doc-{i}" for i in range(500)]
    expected = sorted(keys, key=lambda k: seeded_hash(7, "cut", k))[:40]
    for shuffle_seed in range(3):
        order = keys[:]
        random.Random(shuffle_seed).shuffle(order)
        sample = HashSample[str](40)
        for key in order:
            sample.offer(seeded_hash(7, "cut", key), key, 1, key)
        assert sample.items() == expected


def test_a_character_budget_is_the_shortest_hash_ordered_prefix_reaching_it() -> None:
    texts = {f"doc-{i}": "x" * (10 + i % 37) for i in range(300)}
    ranked = sorted(texts, key=lambda k: seeded_hash(1, "ref", k))
    sample = HashSample[str](1000)
    for key, text in texts.items():
        sample.offer(seeded_hash(1, "ref", key), key, len(text), key)
    chosen = sample.items()
    assert chosen == ranked[: len(chosen)]
    total = sum(len(texts[k]) for k in chosen)
    assert total >= 1000 and total - len(texts[chosen[-1]]) < 1000


def test_everything_is_kept_when_the_limit_is_never_reached() -> None:
    sample = HashSample[int](10**6)
    for i in range(50):
        sample.offer(seeded_hash(0, "ref", str(i)), str(i), 100, i)
    assert sorted(sample.items()) == list(range(50))
    assert sample.wants(2**64 - 1)
