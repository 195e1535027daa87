from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pretrain_core.dedup.normalize import CodePoints, normalize_text
from pretrain_core.dedup.shingles import ShingleSets, char_shingled, shingle_sets


def _word_shingles(text: str, k: int) -> set[str]:
    words = text.split()
    return {" ".join(words[i : i + k]) for i in range(max(len(words) - k + 1, 1))} if words else set()


def _char_shingles(text: str, k: int) -> set[str]:
    return {text[i : i + k] for i in range(max(len(text) - k + 1, 1))} if text else set()


def _sets(texts: list[str], kind: str = "auto", k: int = 5) -> ShingleSets:
    return shingle_sets(CodePoints.of(texts), kind, k, k, 0.3)  # type: ignore[arg-type]


def test_word_shingles_match_a_plain_python_reference(licence: Callable[[str], str]) -> None:
    texts = [normalize_text(licence(name)) for name in ("GPL-2", "LGPL-2.1", "Apache-2.0", "BSD")]
    for k in (1, 3, 5):
        sets = _sets(texts, "word", k)
        assert sets.sizes.tolist() == [len(_word_shingles(t, k)) for t in texts]
        reference = [_word_shingles(t, k) for t in texts]
        exact = len(reference[0] & reference[1]) / len(reference[0] | reference[1])
        assert abs(sets.jaccard(0, np.array([1]))[0] - exact) < 1e-12
        assert sets.jaccard(0, np.array([0, 3])).tolist()[0] == 1.0


def test_a_shingle_hashes_the_same_wherever_it_occurs(licence: Callable[[str], str]) -> None:
    words = normalize_text(licence("GPL-3")).split()
    whole, middle = " ".join(words), " ".join(words[1000:1400])
    sets = _sets([whole, middle])
    assert np.isin(sets.of(1), sets.of(0)).all()
    assert sets.jaccard(1, np.array([0]))[0] == sets.sizes[1] / sets.sizes[0]


def test_auto_uses_characters_for_chinese_and_words_for_english(
    tutor: Callable[[str], str], licence: Callable[[str], str]
) -> None:
    chinese, english = normalize_text(tutor("zh_cn")), normalize_text(licence("MPL-2.0"))
    sets = _sets([chinese, english, normalize_text(tutor("ja"))])
    assert sets.sizes[0] == len(_char_shingles(chinese, 5))
    assert sets.sizes[1] == len(_word_shingles(english, 5))
    assert sets.sizes[2] > 3 * len(normalize_text(tutor("ja")).split())  # Japanese: characters too
    assert _sets([chinese], "word").sizes[0] == len(_word_shingles(chinese, 5))


def test_overlap_counts_shared_shingles_and_the_union(licence: Callable[[str], str]) -> None:
    texts = [normalize_text(licence(name)) for name in ("LGPL-2", "LGPL-2.1")]
    reference = [_word_shingles(t, 5) for t in texts]
    sets = _sets(texts)
    assert sets.overlap(0, 1) == (len(reference[0] & reference[1]), len(reference[0] | reference[1]))
    assert sets.overlap(1, 1) == (len(reference[1]), len(reference[1]))


def test_char_shingled_tells_which_texts_get_character_shingles(
    tutor: Callable[[str], str], licence: Callable[[str], str]
) -> None:
    texts = [normalize_text(t) for t in (tutor("zh_cn"), licence("MPL-2.0"), tutor("ja"), "")]
    assert char_shingled(CodePoints.of(texts), "auto", 0.3).tolist() == [True, False, True, False]
    assert char_shingled(CodePoints.of(texts), "word", 0.3).tolist() == [False] * 4
    assert char_shingled(CodePoints.of(texts[:2]), "char", 0.3).tolist() == [True, True]
    assert char_shingled(CodePoints.of([]), "auto", 0.3).size == 0
    # The decision is the one shingle_sets makes: a character-shingled text has more shingles than words.
    sets = _sets(texts[:3])
    assert sets.sizes[2] > 3 * len(texts[2].split()) and sets.sizes[1] == len(_word_shingles(texts[1], 5))


def test_short_and_empty_documents() -> None:
    sets = _sets(["copyright notice", "", "mit"])
    assert sets.sizes.tolist() == [1, 0, 1]
    assert sets.jaccard(0, np.array([2]))[0] == 0.0


def test_batching_does_not_change_hashes(licence: Callable[[str], str]) -> None:
    texts = [normalize_text(licence(name)) for name in ("GPL-1", "Artistic", "CC0-1.0")]
    texts.insert(1, "")
    together = _sets(texts)
    apart = ShingleSets.concat([_sets([t]) for t in texts])
    assert np.array_equal(together.hashes, apart.hashes) and np.array_equal(together.offsets, apart.offsets)
    assert np.array_equal(together.counts, apart.counts)


def test_reduce_per_doc_sums_shingle_occurrences(licence: Callable[[str], str]) -> None:
    texts = [normalize_text(licence(name)) for name in ("GPL-3", "BSD")] + [""]
    sets = _sets(texts)
    totals = sets.reduce_per_doc(lambda _h, counts: counts[np.newaxis, :], np.add, np.zeros(1, dtype=np.int64))
    assert totals[:, 0].tolist() == [len(texts[0].split()) - 4, len(texts[1].split()) - 4, 0]
