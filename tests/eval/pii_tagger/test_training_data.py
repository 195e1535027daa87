"""Training examples: real sentences, labelled spans that hold fake names and addresses, and clean splits."""

from __future__ import annotations

import pytest

from pretrain_eval.pii_tagger.text_sources import load_sentences
from pretrain_eval.pii_tagger.training_data import Example, _Lexicon, build_examples
from tests.shipped_text import LICENCES, MANUAL_PAGES

SOURCES = [str(LICENCES / "*")] + [str(MANUAL_PAGES / lang / "**" / "*.txt") for lang in ("de", "fr", "zh_CN", "ja")]


@pytest.fixture(scope="module")
def sentences() -> dict[str, list[str]]:
    return load_sentences(SOURCES, per_pattern=150)


@pytest.fixture(scope="module")
def examples(sentences: dict[str, list[str]]) -> dict[str, list[Example]]:
    return build_examples(sentences, per_language=200, seed=0)


def test_every_language_has_examples_of_both_kinds(examples: dict[str, list[Example]]) -> None:
    for lang in ("en", "de", "fr", "zh", "ja"):
        kinds = {s.type for e in examples["train"] if e.lang == lang for s in e.spans}
        assert kinds == {"person", "address"}, lang
    assert len(examples["test"]) == len(examples["test_unlisted"]) == 5 * 50


def test_labelled_spans_cover_names_and_negatives_are_real_sentences(
    examples: dict[str, list[Example]], sentences: dict[str, list[str]]
) -> None:
    train = examples["train"]
    for example in train:
        for span in example.spans:
            covered = example.text[span.start : span.end]
            assert covered == covered.strip() and covered, example
    unchanged = [e for e in train if not e.spans and e.text in set(sentences[e.lang])]
    assert len(unchanged) > 0.2 * len(train)


def test_no_test_sentence_or_test_name_is_trained_on(examples: dict[str, list[Example]]) -> None:
    train_texts = " ".join(e.text for e in examples["train"])
    held_out_names = {
        e.text[s.start : s.end] for e in examples["test"] if e.lang in ("en", "de", "fr") for s in e.spans
    }
    held_out_names = {n for n in held_out_names if " " in n}  # full "First Last" names
    assert held_out_names
    assert not [n for n in held_out_names if n in train_texts]
    for lang in ("en", "de", "fr", "ja"):
        train, test = _Lexicon(lang, "train"), _Lexicon(lang, "test")
        assert not set(train.first) & set(test.first)


def test_examples_are_deterministic(sentences: dict[str, list[str]]) -> None:
    assert build_examples(sentences, 60, seed=3) == build_examples(sentences, 60, seed=3)
    assert build_examples(sentences, 60, seed=3) != build_examples(sentences, 60, seed=4)
