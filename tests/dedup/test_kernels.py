"""The compiled kernels (`pretrain_core/dedup/kernels.py`) give exactly what the plain implementations they replaced
give (tests/dedup/kernel_oracle.py): normalised text, shingle sets with counts, MinHash signatures, UTF-8."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pretrain_core.dedup.minhash import minhash_signatures
from pretrain_core.dedup.normalize import CodePoints, Ignorable, normalize_texts
from pretrain_core.dedup.shingles import char_shingled, shingle_sets
from tests.dedup.kernel_oracle import (
    _char_mode,
    _code_points,
    numpy_minhash_signatures,
    numpy_shingle_sets,
    regex_normalize_text,
)

IGNORE_CHOICES: list[tuple[Ignorable, ...]] = [
    tuple(c) for n in range(4) for c in itertools.combinations(("case", "punctuation", "digits"), n)
]
TRICKY = [
    "",
    "!!! ???",
    "Release 2.4, built on 2024-05-01: Fixed.",
    "İstanbul ΣΟΦΟΣ ΌΣΟΣ straße ﬁne Ⅻ ½ ①②",  # case and compatibility forms that change length
    "ＶＩＭ　教程，第一讲。 全角１２３ abc",
    "a\u00a0b\u2003c\u200bd\te\r\nf\x1cg\x85h",  # no-break, em and zero-width spaces, separators str.split knows
    "snake_case x__y _ 3rd 4th ٣٤٥ ๔๕ 𝟘𝟙",  # underscore, Arabic-Indic, Thai and mathematical digits
    "lone \ud800 surrogate \udfff here",
    "emoji 👍🏽 zwj 👨‍👩‍👧 flags 🇩🇪",
]


def _real_texts(licence: Callable[[str], str], tutor: Callable[[str], str]) -> list[str]:
    return [licence("GPL-2"), licence("BSD"), tutor("zh_cn"), tutor("ja"), tutor("de"), *TRICKY]


@pytest.mark.parametrize("ignore", IGNORE_CHOICES)
def test_normalisation_equals_the_regular_expressions(
    ignore: tuple[Ignorable, ...], licence: Callable[[str], str], tutor: Callable[[str], str]
) -> None:
    texts = _real_texts(licence, tutor)
    assert normalize_texts(texts, ignore).texts() == [regex_normalize_text(t, ignore) for t in texts]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(max_size=60), max_size=6), st.sampled_from(IGNORE_CHOICES))
def test_normalisation_equals_the_regular_expressions_on_any_text(
    texts: list[str], ignore: tuple[Ignorable, ...]
) -> None:
    assert normalize_texts(texts, ignore).texts() == [regex_normalize_text(t, ignore) for t in texts]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=40), max_size=5))
def test_utf8_is_what_python_writes(texts: list[str]) -> None:
    buffer, bounds = CodePoints.of(texts).utf8()
    assert [buffer[bounds[i] : bounds[i + 1]] for i in range(len(texts))] == [
        t.encode("utf-8", errors="surrogatepass") for t in texts
    ]


def test_take_picks_texts_in_the_order_asked() -> None:
    points = CodePoints.of(["alpha", "", "gamma delta", "ε"])
    assert points.take([3, 0, 0, 1]).texts() == ["ε", "alpha", "alpha", ""]
    assert points.take([]).texts() == []


@pytest.mark.parametrize(("kind", "k"), [("auto", 5), ("word", 1), ("word", 3), ("char", 2), ("char", 5)])
def test_shingle_sets_and_signatures_equal_the_numpy_ones(
    kind: str, k: int, licence: Callable[[str], str], tutor: Callable[[str], str]
) -> None:
    rng = random.Random(k)
    texts = normalize_texts(_real_texts(licence, tutor)).texts()
    texts += [" ".join(rng.choices(["a", "b", "c", "dd", "€", "字"], k=rng.randrange(12))) for _ in range(40)]
    ours = shingle_sets(CodePoints.of(texts), kind, k, k, 0.3)  # type: ignore[arg-type]
    plain = numpy_shingle_sets(texts, kind, k, k, 0.3)  # type: ignore[arg-type]
    for field in ("hashes", "counts", "offsets"):
        assert np.array_equal(getattr(ours, field), getattr(plain, field)), field
    assert ours.sizes.sum() > len(texts)
    assert np.array_equal(minhash_signatures(ours, 128, 1), numpy_minhash_signatures(plain, 128, 1))
    points, _, doc_of_char = _code_points(texts)
    expected_modes = _char_mode(points, doc_of_char, len(texts), kind, 0.3)  # type: ignore[arg-type]
    assert np.array_equal(char_shingled(CodePoints.of(texts), kind, 0.3), expected_modes)  # type: ignore[arg-type]


def test_batches_larger_than_one_kernel_call_give_the_same_sets(licence: Callable[[str], str]) -> None:
    texts = normalize_texts([licence(name) for name in ("GPL-3", "GPL-2", "LGPL-2.1", "Apache-2.0")] * 16).texts()
    assert sum(map(len, texts)) > 1 << 20  # more than one kernel call's worth of characters
    ours = shingle_sets(CodePoints.of(texts), "auto", 5, 5, 0.3)
    plain = numpy_shingle_sets(texts, "auto", 5, 5, 0.3)
    assert np.array_equal(ours.hashes, plain.hashes) and np.array_equal(ours.offsets, plain.offsets)
