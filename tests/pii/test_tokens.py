"""Tokenisation and features for the tagger: scripts, candidates, and batches that do not leak into each other."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pretrain_core.pii.token_spans import scan_token_spans
from pretrain_core.pii.tokens import FEATURE_KINDS, Featurizer, gazetteer_entries, lexical, token_texts, tokenize

TEXTS = [
    "Send the forms to 10 Downing Street, London SW1A 2AA before Friday.",
    "王伟说：会议在北京市海淀区举行。",
    "田中さんは東京に住んでいます。",
]


def test_tokens_keep_postcodes_whole_and_split_cjk_into_characters() -> None:
    assert token_texts(TEXTS[0])[-5:] == ["SW1A", "2AA", "before", "Friday", "."]
    assert token_texts(TEXTS[1])[:4] == ["王", "伟", "说", "："]
    assert [t.text for t in tokenize(TEXTS[2])] == token_texts(TEXTS[2])
    assert all(TEXTS[0][t.start : t.end] == t.text for t in tokenize(TEXTS[0]))


def test_candidates_are_capitalised_numeric_han_and_katakana_tokens() -> None:
    assert lexical("London").candidate and lexical("London").shape == "Xx"
    assert lexical("10").candidate and lexical("SW1A").shape == "mix"
    assert lexical("王").candidate and lexical("テ").candidate
    assert not lexical("the").candidate and not lexical("は").candidate and not lexical(",").candidate


def featurizer() -> Featurizer:
    return Featurizer.learn(TEXTS, min_count=1, first_names=["Anna", "伟"], last_names=["Weber", "田中"])


def test_gazetteer_is_lower_cased_and_per_character_for_cjk() -> None:
    assert gazetteer_entries(["Anna Maria", "田中"]) == {"anna", "maria", "田", "中"}


def test_keys_of_a_text_do_not_depend_on_its_batch() -> None:
    f = featurizer()
    alone, [indices] = f.candidate_keys([TEXTS[0]])
    batched, per_text = f.candidate_keys(TEXTS)
    assert alone.shape == (len(indices), len(FEATURE_KINDS))
    assert np.array_equal(per_text[0], indices)
    assert np.array_equal(batched[: len(indices)], alone)
    tokens = token_texts(TEXTS[0])
    assert [tokens[i] for i in indices] == ["Send", "10", "Downing", "Street", "London", "SW1A", "2AA", "Friday"]


def test_featurizer_pickles_without_its_cache() -> None:
    f = featurizer()
    keys, _ = f.candidate_keys([TEXTS[1]])
    restored = pickle.loads(pickle.dumps(f))
    assert np.array_equal(restored.candidate_keys([TEXTS[1]])[0], keys)


def test_listed_cjk_names_mark_where_they_start_and_continue() -> None:
    f = Featurizer.learn(TEXTS, 1, ["Anna"], ["王"], cjk_family=["佐藤", "欧阳"], cjk_given=["花子"])
    tokens = token_texts("佐藤花子さんと欧阳娜")
    keys, [indices] = f.candidate_keys(["佐藤花子さんと欧阳娜"])
    listed = keys[:, FEATURE_KINDS.index("d")] >> 24 & (2**24 - 1)
    by_token = dict(zip([tokens[i] for i in indices], listed.tolist(), strict=True))
    assert by_token["佐"] == 1 and by_token["藤"] == 2  # family name: first, then further character
    assert by_token["花"] == 4 and by_token["子"] == 8  # given name
    assert by_token["欧"] == 1 and by_token["娜"] == 0


_ODD_PIECES = ["\u3000", "\xa0", "\u2028", "_", "O'Neil", "x-y", "王伟", "テスト", "\U0001f600", "é", "\t", "-", "’"]


def _scanned(texts: list[str]) -> list[list[tuple[int, int, str]]]:
    spans = scan_token_spans(texts)
    return [
        [(start, end, text[start:end]) for start, end in zip(*(a.tolist() for a in spans.of(d)), strict=True)]
        for d, text in enumerate(texts)
    ]


def _expected(text: str) -> list[tuple[int, int, str]]:
    return [(t.start, t.end, t.text) for t in tokenize(text)]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(st.one_of(st.sampled_from(_ODD_PIECES), st.text(max_size=6)), max_size=14).map("".join)))
def test_the_compiled_scan_cuts_the_tokens_the_regex_cuts(texts: list[str]) -> None:
    """The tagger reads tokens off the compiled scan (`token_spans`); `tokens.token_texts`, the regular expression,
    is their definition: the same offsets and texts, text by text, whatever the batch."""
    assert _scanned(texts) == [_expected(text) for text in texts]


def test_the_compiled_scan_of_every_labelled_text() -> None:
    from pretrain_eval.stage_quality.pii import load_items

    labelled = Path(__file__).resolve().parents[2] / "data" / "labelled" / "pii"
    texts = [item.text for item in load_items(str(labelled)) + load_items(str(labelled / "names"))]
    assert len(texts) > 100
    assert _scanned(texts) == [_expected(text) for text in texts]


def test_equal_tokens_hash_equal_and_different_ones_differ() -> None:
    spans = scan_token_spans(["Anna met anna and Anna-Lena", "Anna"])
    assert spans.hashes[0] == spans.hashes[5] != spans.hashes[2]  # "Anna" in both texts; "anna"
    assert len(set(spans.hashes[:5].tolist())) == 5  # Anna, met, anna, and, Anna-Lena


def test_keys_do_not_depend_on_the_types_seen_before() -> None:
    """Token types are registered by hash as batches come: a featurizer that has seen other text gives the keys a
    fresh one gives."""
    seasoned, fresh = featurizer(), featurizer()
    seasoned.candidate_keys(["Friday in London with Anna Weber.", "王伟和田中", TEXTS[2]])
    for text in TEXTS:
        assert np.array_equal(seasoned.candidate_keys([text])[0], fresh.candidate_keys([text])[0])
        fresh = featurizer()
