"""The skeleton tokeniser on real text: what it keeps, what it reduces to shapes, and the two properties the quality
score relies on: word order matters to it, vocabulary does not."""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pretrain_core.quality.ngram import NgramLM, pad_sentences
from pretrain_core.quality.scoring import ReferenceModel, Skeleton
from pretrain_core.quality.skeleton import SHAPES, SkeletonTokenizer, _Words
from pretrain_core.quality.tokenizers import BOS, EOS


@pytest.fixture(scope="module")
def tokenizer(english: list[str]) -> SkeletonTokenizer:
    return SkeletonTokenizer.train(english[0:960:2], 150)


@pytest.fixture(scope="module")
def model(english: list[str], tokenizer: SkeletonTokenizer) -> ReferenceModel:
    ids, lengths = tokenizer.encode(english[0:960:2])
    lm = NgramLM.fit(pad_sentences(ids, lengths, 3, BOS, EOS), 3, tokenizer.vocab_size, BOS)
    return ReferenceModel(tokenizer, lm)


def expected(tokenizer: SkeletonTokenizer, word: str, shape: str, glued: bool = False) -> int:
    """The id of a word: its own if it is kept, else its shape's; glued ids follow all spaced ones."""
    base = (
        3 + tokenizer.words.index(word) if word in tokenizer.words else 3 + len(tokenizer.words) + SHAPES.index(shape)
    )
    return base + (3 + len(tokenizer.words) + len(SHAPES) if glued else 0)


def test_keeps_the_most_frequent_words_case_folded_and_reloads(
    english: list[str], tokenizer: SkeletonTokenizer
) -> None:
    assert len(tokenizer.words) == 150
    assert {"the", "of", "and", "to", "a", "is", ",", "."} <= set(tokenizer.words)
    assert tokenizer.words[0] in ("the", ",", ".")  # the most frequent word of English text comes first
    assert all(word == word.lower() for word in tokenizer.words)
    assert SkeletonTokenizer.train(english[0:960:2], 150).to_bytes() == tokenizer.to_bytes()  # deterministic
    same = SkeletonTokenizer.from_bytes(tokenizer.to_bytes())
    ids, lengths = tokenizer.encode(english[1:40:2])
    again, again_lengths = same.encode(english[1:40:2])
    assert np.array_equal(ids, again) and np.array_equal(lengths, again_lengths)
    with pytest.raises(ValueError, match="not a"):
        SkeletonTokenizer.from_bytes(b'{"format": "other"}')


def test_words_shapes_spacing_and_lines(tokenizer: SkeletonTokenizer) -> None:
    assert "the" in tokenizer.words and "," in tokenizer.words and "falcot" not in tokenizer.words
    ids, lengths = tokenizer.encode(["The Falcot NASA server, 2048 blocks", "", "x=1 日本語です 🙂"])
    assert lengths.tolist() == [7, 0, 9]  # each Han or kana character is a token of its own
    tokens = [
        ("the", "cap", False),  # kept, case-folded
        ("falcot", "cap", False),
        ("nasa", "upper", False),
        ("server", "low", False),
        (",", "symbol", True),  # punctuation glued to the word before it
        ("2048", "number", False),
        ("blocks", "low", False),
        ("x", "low", False),
        ("=", "symbol", True),
        ("1", "number", True),
        ("日", "han", False),
        ("本", "han", True),
        ("語", "han", True),
        ("で", "kana", True),
        ("す", "kana", True),
        ("🙂", "symbol", False),  # outside the Basic Multilingual Plane
    ]
    assert ids.tolist() == [expected(tokenizer, word, shape, glued) for word, shape, glued in tokens]
    assert tokenizer.encode([""])[0].size == 0


def test_unfamiliar_words_of_the_same_shape_leave_the_skeleton_unchanged(
    english: list[str], tokenizer: SkeletonTokenizer, model: ReferenceModel
) -> None:
    """Every word outside the kept list swapped for a different word of the same shape (its letters reversed):
    the skeleton, hence its perplexity, is identical, while a lexical model would find the text alien."""
    kept = set(tokenizer.words)

    def scramble(match: re.Match[str]) -> str:
        word = match.group()
        if word.lower() in kept or len(word) < 2:
            return word
        flipped = word[::-1].lower()
        flipped += "zq" if flipped in kept else ""  # never turn an unkept word into a kept one
        return flipped.upper() if word.isupper() else flipped.capitalize() if word[0].isupper() else flipped

    docs = ["\n".join(english[i : i + 3]) for i in range(801, 900, 3)]
    scrambled = [re.sub(r"[^\W\d_]+", scramble, doc) for doc in docs]
    assert scrambled != docs
    assert np.array_equal(tokenizer.encode(scrambled)[0], tokenizer.encode(docs)[0])
    assert np.array_equal(model.perplexities(scrambled), model.perplexities(docs))


def test_word_order_raises_skeleton_perplexity(
    english: list[str],
    chinese: list[str],
    model: ReferenceModel,
    as_documents: Callable[[list[str], int], list[str]],
    word_salad: Callable[[str, int], str],
) -> None:
    held_out = as_documents(english[1:960:2], 3)[:120]
    prose = model.perplexities(held_out)
    salad = model.perplexities([word_salad(doc, seed) for seed, doc in enumerate(held_out)])
    assert np.mean(salad > prose) > 0.95
    assert np.median(salad) > 1.5 * np.median(prose)
    zh_tokenizer = SkeletonTokenizer.train(chinese[0:1100:2], 150)
    ids, lengths = zh_tokenizer.encode(chinese[0:1100:2])
    zh_model = ReferenceModel(
        zh_tokenizer, NgramLM.fit(pad_sentences(ids, lengths, 3, BOS, EOS), 3, zh_tokenizer.vocab_size, BOS)
    )
    zh_docs = as_documents(chinese[1:1100:2], 3)[:80]
    zh_salad = zh_model.perplexities([word_salad(doc, seed) for seed, doc in enumerate(zh_docs)])
    assert np.mean(zh_salad > zh_model.perplexities(zh_docs)) > 0.95


def test_minified_code_differs_from_formatted_code_only_in_spacing(python_files: list[str]) -> None:
    tokenizer = SkeletonTokenizer.train(python_files[::2], 150)
    source = "def area(width, height):\n    return width * height\n"
    minified = "def area(width,height):\n return width*height\n"
    formatted_ids, formatted_lengths = tokenizer.encode(source.splitlines())
    minified_ids, minified_lengths = tokenizer.encode(minified.splitlines())
    assert np.array_equal(formatted_lengths, minified_lengths)
    offset = 3 + len(tokenizer.words) + len(SHAPES)
    differ = formatted_ids != minified_ids
    assert differ.sum() == 3  # "height" after ",", and "*" and "height" around it: glued in the minified text
    assert np.array_equal(minified_ids[differ], formatted_ids[differ] + offset)


def _kept_share_alone(tokenizer: SkeletonTokenizer, text: str) -> float:
    """The plain definition: the text tokenised on its own."""
    hashes = _Words(text).hashes
    return float(np.mean(tokenizer._table.find(hashes) >= 0)) if len(hashes) else 0.0


def _with_skeleton(model: ReferenceModel, tokenizer: SkeletonTokenizer) -> ReferenceModel:
    return ReferenceModel(model.tokenizer, model.lm, Skeleton(tokenizer, model.lm, 1.0))


def test_kept_shares_of_scored_batches_equal_each_text_alone(
    english: list[str], python_files: list[str], tokenizer: SkeletonTokenizer, model: ReferenceModel
) -> None:
    """The share comes from the ids the skeleton model scores (a batch's non-blank lines), yet is what the text
    tokenised alone gives: blank lines hold no tokens and every line break is whitespace."""
    texts = [*english[1:400:3], *python_files[:20], "", "\n\n", "  x", "Ünïcödé\n\tend", "a\ud800b 42x", "中文，日本語"]
    texts += ["line\u2028sep\x1cfile\x85next\r\nend\x0b.\x0c"]  # line boundaries of str.splitlines
    shares = _with_skeleton(model, tokenizer).components(texts, batch_chars=3000).kept_share.tolist()
    assert shares == [_kept_share_alone(tokenizer, text) for text in texts]
    assert 0.2 < float(np.mean(shares[:100])) < 0.9  # English prose is full of the kept words
    assert np.isnan(model.components(texts[:3]).kept_share).all()  # no skeleton, no share


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(st.sampled_from("ab Ab1.\n\t-_中あ\u0301ÉX\u2028\r"), max_size=30), max_size=8))
def test_kept_shares_on_any_text(tokenizer: SkeletonTokenizer, model: ReferenceModel, texts: list[str]) -> None:
    shares = _with_skeleton(model, tokenizer).components(texts).kept_share.tolist()
    assert shares == [_kept_share_alone(tokenizer, text) for text in texts]
