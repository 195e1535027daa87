"""Perplexity on real text: held-out prose scores lower than the same words shuffled and than navigation
boilerplate, in English and in Chinese (characters and SentencePiece); the CCNet formula is what is computed."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from pretrain_core.quality.config import QualityConfig
from pretrain_core.quality.ngram import pad_sentences
from pretrain_core.quality.reference import train_reference_model
from pretrain_core.quality.sampling import fold_of
from pretrain_core.quality.scoring import FoldedModel, ReferenceModel, split_lines

CFG = QualityConfig(vocab_size=1000, order=4)


@pytest.fixture(scope="module")
def models(english: list[str], chinese: list[str]) -> dict[str, ReferenceModel]:
    """Models trained on the even paragraphs (of about all the shipped ones: 970 English, 1,100 Chinese); the odd
    ones are held out for scoring."""
    return {
        "en": train_reference_model(english[0:960:2], "sentencepiece", CFG),
        "zh-characters": train_reference_model(chinese[0:1100:2], "characters", CFG),
        "zh-sentencepiece": train_reference_model(chinese[0:1100:2], "sentencepiece", CFG),
    }


@pytest.mark.parametrize("name", ["en", "zh-characters", "zh-sentencepiece"])
def test_real_prose_beats_word_salad_and_boilerplate(
    name: str,
    models: dict[str, ReferenceModel],
    english: list[str],
    chinese: list[str],
    navigation: dict[str, list[str]],
    as_documents: Callable[[list[str], int], list[str]],
    word_salad: Callable[[str, int], str],
) -> None:
    lang = name[:2]
    held_out = as_documents(english[1:960:2] if lang == "en" else chinese[1:1100:2], 3)[:150]
    model = models[name]
    prose = model.perplexities(held_out)
    salad = model.perplexities([word_salad(doc, seed) for seed, doc in enumerate(held_out)])
    labels = max(navigation[lang], key=len)  # "Home Next Prev Up" / "上一级 上一页 下一页 起始页"
    boilerplate = model.perplexities(["\n".join([labels] * 25)])[0]
    assert np.all(salad > prose), "shuffling a document's words must raise its perplexity"
    assert np.median(salad) > 2.5 * np.median(prose)
    assert boilerplate > np.percentile(prose, 90)


def test_perplexity_is_the_ccnet_formula(models: dict[str, ReferenceModel], english: list[str]) -> None:
    model = models["en"]
    lexical = ReferenceModel(model.tokenizer, model.lm)  # without the skeleton model
    doc = "\n".join(english[901:904])
    lines = split_lines(doc)
    ids, lengths = model.tokenizer.encode(lines)
    log10_p = model.lm.log10_probs(pad_sentences(ids, lengths, CFG.order, model.tokenizer.bos, model.tokenizer.eos))
    assert len(log10_p) == int(np.sum(lengths + 1))  # every piece plus one `</s>` per line
    expected = 10 ** (-log10_p.sum() / np.sum(lengths + 1))
    assert lexical.perplexities([doc])[0] == pytest.approx(expected, rel=1e-6)


def test_skeleton_perplexity_enters_as_a_weighted_geometric_mean(
    models: dict[str, ReferenceModel], english: list[str]
) -> None:
    model = models["en"]
    assert model.skeleton is not None and model.skeleton.weight == CFG.skeleton_weight
    docs = ["\n".join(english[i : i + 3]) for i in range(901, 940, 3)]
    lexical = ReferenceModel(model.tokenizer, model.lm).perplexities(docs).astype(np.float64)
    skeleton = ReferenceModel(model.skeleton.tokenizer, model.skeleton.lm).perplexities(docs).astype(np.float64)
    w = model.skeleton.weight
    expected = np.power(lexical, 1 / (1 + w)) * np.power(skeleton, w / (1 + w))
    np.testing.assert_allclose(model.perplexities(docs), expected, rtol=1e-5)


def test_blank_lines_batches_and_empty_documents(models: dict[str, ReferenceModel], english: list[str]) -> None:
    model = models["en"]
    docs = ["\n".join(english[i : i + 3]) for i in range(801, 860, 3)]
    spaced = [doc.replace("\n", "\n\n  \n") for doc in docs]
    whole = model.perplexities(docs)
    assert np.array_equal(model.perplexities(spaced), whole)
    assert np.array_equal(model.perplexities(docs, batch_chars=1), whole)
    empty = model.perplexities(["", " \n\t\n"])
    assert np.all(np.isfinite(empty)) and empty[0] == empty[1]
    assert whole.dtype == np.float32


def test_folded_model_scores_each_document_with_its_folds_part(
    models: dict[str, ReferenceModel], english: list[str]
) -> None:
    folded = FoldedModel((models["en"], models["zh-characters"]), seed=3)
    docs = english[901:941]
    ids = [f"doc-{i}" for i in range(len(docs))]
    folds = np.array([fold_of(3, doc_id) for doc_id in ids])
    assert 0 < folds.sum() < len(docs)
    direct = np.where(folds == 0, models["en"].perplexities(docs), models["zh-characters"].perplexities(docs))
    assert np.array_equal(folded.perplexities(ids, docs, batch_chars=10_000), direct)
    single = FoldedModel((models["en"],), seed=3)
    assert np.array_equal(single.perplexities(ids, docs, batch_chars=10_000), models["en"].perplexities(docs))
