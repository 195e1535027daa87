from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from pretrain_core.evaluate.zero_shot import CHOICES, TaskItem, build_items, score_items, score_tokens, sentences_of
from pretrain_core.export.bundle import load_bundle
from tests.evaluate import conftest as evaluate_fixtures
from tests.shipped_text import LICENCES, manual_pages, vim_tutor

token_data = evaluate_fixtures.token_data
trained_output = evaluate_fixtures.trained_output


def held_out_texts() -> list[str]:
    """Real English and Chinese documents, as the test split would hand them over."""
    texts = [(LICENCES / name).read_text(encoding="utf-8") for name in ("Apache-2.0", "GPL-3", "MPL-2.0")]
    texts += [p.read_text(encoding="utf-8") for p in manual_pages("en", 30)]
    zh = vim_tutor("zh_cn").read_text(encoding="utf-8")
    texts += [zh[i : i + 1500] for i in range(0, len(zh), 1500)]
    texts += [p.read_text(encoding="utf-8") for p in manual_pages("zh_CN", 30)]
    return texts


def squeeze(text: str) -> str:
    """Text without whitespace: items join sentences and words with single spaces."""
    return "".join(text.split())


def test_items_come_from_the_text_in_english_and_chinese_and_are_seeded() -> None:
    texts = held_out_texts()
    items = build_items(texts, per_group=20, seed=3)
    groups = {(item.task, item.language) for item in items}
    assert {("last_word", "en"), ("continuation", "en"), ("last_word", "zh"), ("continuation", "zh")} <= groups
    corpus = squeeze("\n".join(texts))
    for item in items:
        if item.task == "last_word":
            target = item.choices[0]
            assert squeeze(item.context + target) in corpus and target.strip().isalpha()
        else:
            assert len(item.choices) == CHOICES and len(set(item.choices)) == CHOICES
            # the real next sentence follows the context; the others are from other documents
            assert squeeze(item.context + item.choices[item.answer]) in corpus
    assert build_items(texts, per_group=20, seed=3) == items
    answers = [item.answer for item in items if item.task == "continuation"]
    assert len(set(answers)) == CHOICES  # the right choice is not always in one place
    assert all(sum(1 for i in items if (i.task, i.language) == g) <= 20 for g in groups)


def test_sentences_split_on_latin_and_chinese_ends() -> None:
    assert sentences_of("One here. Two there! 三句话。四句话？") == ["One here.", "Two there!", "三句话。", "四句话？"]
    assert sentences_of("e.g. not a split. Next") == ["e.g. not a split.", "Next"]


def test_token_scores_are_the_models_log_probabilities(trained_output: str) -> None:
    bundle = load_bundle(trained_output)
    ids = bundle.tokenizer.encode("Licensed under the Apache License")
    total, greedy = score_tokens(bundle.model, ids, 3)
    with torch.no_grad():
        log_probs = F.log_softmax(bundle.model(torch.tensor([ids[:-1]])).float(), dim=-1)[0]
    expected = sum(float(log_probs[i - 1, ids[i]]) for i in range(3, len(ids)))
    assert total == pytest.approx(expected, abs=1e-4)
    assert greedy == all(int(log_probs[i - 1].argmax()) == ids[i] for i in range(3, len(ids)))


def test_scores_per_group_with_chance_and_centred_accuracy(trained_output: str) -> None:
    bundle = load_bundle(trained_output)
    context = "Licensed under the Apache License, Version 2.0 (the"
    items = [
        TaskItem("continuation", "en", context, (" License", " banana", " zebra", " quartz"), 0),
        TaskItem("continuation", "en", context, (" banana", " License", " zebra", " quartz"), 1),
        TaskItem("last_word", "en", context, (" License",), 0),
    ]
    scores = score_items(bundle.model, bundle.tokenizer, items)
    assert set(scores) == {"continuation/en", "continuation/all", "last_word/en", "last_word/all"}
    choice = scores["continuation/en"]
    assert choice.items == 2 and choice.chance == 0.25
    assert choice.centred_accuracy == pytest.approx((choice.accuracy - 0.25) / 0.75)
    assert choice.stderr == pytest.approx(math.sqrt(choice.accuracy * (1 - choice.accuracy) / 2))
    assert scores["last_word/en"].centred_accuracy is None and scores["last_word/en"].chance == 0.0


def test_windows_give_contiguous_pieces_cut_at_document_ends(trained_output: str) -> None:
    import numpy as np

    from pretrain_core.evaluate.zero_shot import documents_of

    tokenizer = load_bundle(trained_output).tokenizer
    eos = tokenizer.eos_id()
    first, second = tokenizer.encode("First document ends here."), tokenizer.encode("The second one starts.")
    stream = [*first, eos, *second, eos, *first]
    windows = np.array([stream[:12], stream[11:23]])  # two windows sharing one id, as packed
    texts = documents_of(windows, eos, tokenizer)
    originals = ["First document ends here.", "The second one starts."]
    assert texts and all(any(t in o for o in originals) for t in texts)  # pieces of real text, never joined
    assert not any(eos in tokenizer.encode(t) for t in texts)
