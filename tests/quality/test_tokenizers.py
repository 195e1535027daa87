"""Reference tokenisers: deterministic training, text seen exactly as written, CJK handled both ways."""

from __future__ import annotations

import numpy as np
import pytest

from pretrain_core.quality.tokenizers import (
    BOS,
    EOS,
    UNK,
    CharacterTokenizer,
    SentencePieceTokenizer,
    load_tokenizer,
    required_characters,
)


def test_sentencepiece_training_is_deterministic_and_reloads(english: list[str]) -> None:
    first = SentencePieceTokenizer.train(english[:300], vocab_size=500, character_coverage=0.9995)
    second = SentencePieceTokenizer.train(english[:300], vocab_size=500, character_coverage=0.9995)
    assert first.to_bytes() == second.to_bytes()
    assert first.vocab_size == 500
    reloaded = load_tokenizer("sentencepiece", first.to_bytes())
    ids, lengths = reloaded.encode(english[300:305])
    assert np.array_equal(ids, first.encode(english[300:305])[0])
    assert lengths.sum() == len(ids) and len(lengths) == 5
    assert not np.isin(ids, [BOS, EOS]).any()


def test_identity_normalisation_keeps_whitespace_and_case(english: list[str]) -> None:
    tok = SentencePieceTokenizer.train(english[:300], vocab_size=500, character_coverage=0.9995)
    variants = ["apt-get install  foo", "apt-get install foo", "APT-GET INSTALL FOO", "\tapt-get install foo"]
    encoded = [tuple(tok.encode([v])[0].tolist()) for v in variants]
    assert len(set(encoded)) == len(variants)


def test_vocabulary_grows_to_hold_the_characters_chinese_needs(chinese: list[str]) -> None:
    needed = required_characters(chinese[:500], 0.9995)
    assert needed > 500
    tok = SentencePieceTokenizer.train(chinese[:500], vocab_size=200, character_coverage=0.9995)
    assert tok.vocab_size >= needed + 3
    ids, _ = tok.encode(chinese[:500])
    assert np.mean(ids == UNK) < 0.001


def test_character_tokenizer_keeps_every_reference_character_and_maps_the_rest_to_unk(chinese: list[str]) -> None:
    tok = CharacterTokenizer.train(chinese[:400])
    distinct = {char for line in chinese[:400] for char in line}
    assert tok.vocab_size == len(distinct) + 3  # no cap: a rare reference character keeps its own id
    line = chinese[450]
    ids, lengths = tok.encode([line, "", "龘"])
    assert lengths.tolist() == [len(line), 0, 1]
    assert ids[-1] == UNK  # a character the reference never used
    assert ids.min() >= 0 and ids.max() < tok.vocab_size and not np.isin(ids, [BOS, EOS]).any()
    reference_ids, _ = tok.encode(chinese[:400])
    assert not np.any(reference_ids == UNK)
    same = load_tokenizer("characters", tok.to_bytes())
    assert np.array_equal(same.encode([line])[0], tok.encode([line])[0])
    # the most frequent characters get the smallest ids
    assert tok.encode(["的"])[0][0] < tok.encode(["网"])[0][0]


def test_refuses_empty_text_and_unknown_kinds() -> None:
    with pytest.raises(ValueError):
        SentencePieceTokenizer.train(["", "   "], vocab_size=100, character_coverage=0.9995)
    with pytest.raises(ValueError):
        load_tokenizer("bpe", b"")
