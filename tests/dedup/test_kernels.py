"""The compiled kernels (`pretrain_core/dedup/kernels.py`) give exactly what the plain implementations they replaced
give (tests/dedup/kernel_oracle.py): normalised text (from Python strings and from Arrow's UTF-8), shingle sets with
counts, MinHash signatures, UTF-8, and the exact Jaccard of pairs of sets."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pretrain_core.dedup import kernels
from pretrain_core.dedup.config import Ignorable
from pretrain_core.dedup.minhash import minhash_signatures
from pretrain_core.dedup.normalize import CodePoints, normalize_arrow, normalize_texts
from pretrain_core.dedup.shingles import char_shingled, shingle_sets
from pretrain_core.unicode_table import FOLD_CONTEXTUAL, fold_table, fold_table_of
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


# Characters whose NFKC or lower case depends on their neighbours, or that expand: combining marks, Hangul jamo that
# compose with the syllable before them, sigma, dotted I, ligatures, full-width and circled forms.
CONTEXT_SENSITIVE = (
    "\u0301\u0308\u0323\u0327\u0345\u05b0\u0651\u093c\u094d\u0e48\u1161\u1175\u11a8\u11c2"
    "\u0b3e\u0b47\u0cd5\u0cbf\u0dcf\u0dd9\u302a\u3099\u309a"
    "ΣσςİIiaeoAEOuUÅåǄǅﬁﬃ…´¨¸½①㍻ｶﾞﾟ가각ᄀ뷁，。 .-_0١"
)
NOT_SURROGATES = st.characters(exclude_categories=("Cs",))


def _as_arrow_equals_as_python(texts: list[str], ignore: tuple[Ignorable, ...]) -> None:
    expected = normalize_texts(texts, ignore)
    for array in (pa.array(texts, pa.string()), pa.array(["x", *texts, "y"], pa.large_string()).slice(1, len(texts))):
        got = normalize_arrow(array, ignore)
        assert got.offsets.tolist() == expected.offsets.tolist()
        assert got.points.astype(np.uint32).tolist() == expected.points.astype(np.uint32).tolist()
        assert got.texts() == expected.texts()


@pytest.mark.parametrize("ignore", IGNORE_CHOICES)
def test_normalisation_of_arrow_text_equals_python_s(
    ignore: tuple[Ignorable, ...], licence: Callable[[str], str], tutor: Callable[[str], str]
) -> None:
    texts = [t for t in _real_texts(licence, tutor) if "surrogate" not in t]
    _as_arrow_equals_as_python(texts, ignore)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.text(st.sampled_from(CONTEXT_SENSITIVE) | NOT_SURROGATES, max_size=40)
        | st.text(st.sampled_from(CONTEXT_SENSITIVE), max_size=12),
        max_size=6,
    ),
    st.sampled_from(IGNORE_CHOICES),
)
def test_normalisation_of_arrow_text_equals_python_s_on_any_text(
    texts: list[str], ignore: tuple[Ignorable, ...]
) -> None:
    _as_arrow_equals_as_python(texts, ignore)


def test_every_pair_of_context_sensitive_characters_folds_as_python_folds_it() -> None:
    pairs = [a + b for a in CONTEXT_SENSITIVE for b in CONTEXT_SENSITIVE]
    _as_arrow_equals_as_python(pairs, ("case", "punctuation"))
    _as_arrow_equals_as_python(pairs, ())


def test_the_fold_table_leaves_to_python_what_depends_on_context() -> None:
    table = fold_table(lower=True).points
    for char in "\u0301\u1161\u11a8Σİ":  # a combining mark, jamo that compose backwards, sigma, dotted I
        assert table[ord(char)] == FOLD_CONTEXTUAL, repr(char)
    assert (table[ord("Ａ")], table[ord("，")], table[ord("é")]) == (ord("a"), ord(","), ord("é"))
    assert int((table != FOLD_CONTEXTUAL).sum()) > 1_000_000  # nearly every code point folds alone


def test_normalising_arrow_text_with_nulls_is_an_error() -> None:
    with pytest.raises(ValueError, match="nulls"):
        normalize_arrow(pa.array(["a", None]))


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


@pytest.mark.parametrize("bad", [b"ab\xc3", b"\xff\xfe", b"\xf7\xbf\xbf\xbf", b"x\x80y"])
def test_arrow_text_that_is_not_utf8_is_a_decoding_error_not_a_read_past_the_text(bad: bytes) -> None:
    data = b"ok" + bad  # built unchecked: Arrow validates strings it makes itself
    offsets = np.array([0, 2, len(data)], dtype=np.int32)
    array = pa.Array.from_buffers(pa.string(), 2, [None, pa.py_buffer(offsets.tobytes()), pa.py_buffer(data)])
    with pytest.raises(UnicodeDecodeError):
        normalize_arrow(array)


def _plain_jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """The definition the pair kernel replaced: `np.intersect1d` of the two sets."""
    shared = np.intersect1d(a, b, assume_unique=True).size
    union = a.size + b.size - shared
    return shared / union if union else 0.0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sets(st.integers(0, 40), max_size=30), min_size=1, max_size=8), st.data())
def test_pair_jaccard_is_the_intersection_over_the_union(sets: list[set[int]], data: st.DataObject) -> None:
    """Small hash values overlap often; empty sets are among them (both empty: 0)."""
    arrays = [np.array(sorted(s), dtype=np.uint64) for s in sets]
    offsets = np.concatenate([[0], np.cumsum([a.size for a in arrays])]).astype(np.int64)
    hashes = np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.uint64)
    pairs = data.draw(st.lists(st.tuples(st.integers(0, len(sets) - 1), st.integers(0, len(sets) - 1)), max_size=20))
    left = np.array([i for i, _ in pairs], dtype=np.int64)
    right = np.array([j for _, j in pairs], dtype=np.int64)
    ours = kernels.pair_jaccard(hashes, offsets, hashes, offsets, left, right)
    assert ours.tolist() == [_plain_jaccard(arrays[i], arrays[j]) for i, j in pairs]


def test_pair_jaccard_on_real_shingle_sets_with_the_high_bit_set(licence: Callable[[str], str]) -> None:
    texts = normalize_texts([licence(name) for name in ("GPL-3", "GPL-2", "LGPL-2.1", "LGPL-3")]).texts()
    sets = shingle_sets(CodePoints.of(texts), "word", 5, 5, 0.3)
    assert (sets.hashes >= np.uint64(1 << 63)).any()  # unsigned order, not signed, is what the walk needs
    rows = np.arange(len(texts), dtype=np.int64)
    left, right = np.repeat(rows, len(texts)), np.tile(rows, len(texts))
    ours = kernels.pair_jaccard(sets.hashes, sets.offsets, sets.hashes, sets.offsets, left, right)
    expected = [_plain_jaccard(sets.of(i), sets.of(j)) for i, j in zip(left.tolist(), right.tolist(), strict=True)]
    assert ours.tolist() == expected and 0 < min(expected) < max(expected) == 1.0


@pytest.mark.parametrize("lower", [True, False])
def test_the_fold_table_equals_the_one_every_code_point_gives(lower: bool) -> None:
    """Unassigned and private-use code points are left out of the build as folding to themselves: the table is
    the one that folding each of the 1,114,112 code points through unicodedata gives."""
    every = fold_table_of(list(range(0x110000)), np.zeros(0x110000, dtype=bool), lower)
    built = fold_table(lower)
    for name in ("points", "expansions", "offsets"):
        assert np.array_equal(getattr(built, name), getattr(every, name)), name
