from __future__ import annotations

from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from pretrain_core.clean.token_kernel import LETTER_TOKEN, UNSEGMENTED_CHAR, WORD_TOKEN
from pretrain_core.clean.words import is_word, scan_tokens, split_tokens
from tests.clean.token_oracle import first_appearance_ids, has_letter, is_unsegmented_char


def test_spaced_text_splits_on_whitespace(udhr: dict[str, str]) -> None:
    assert split_tokens(udhr["en"]) == udhr["en"].split()
    assert split_tokens(udhr["ko"]) == udhr["ko"].split()  # Korean puts spaces between words


def test_chinese_counts_characters_and_drops_glued_punctuation(udhr: dict[str, str]) -> None:
    tokens = split_tokens(udhr["zh"])
    assert tokens[:4] == ["人", "人", "生", "而"]
    assert "，" not in tokens and "。" not in tokens
    assert len(tokens) == sum(1 for char in udhr["zh"] if char.isalpha())


def test_latin_inside_cjk_stays_one_word(cjk_text: Callable[[str], str]) -> None:
    tokens = split_tokens(cjk_text("gb2312"))
    assert tokens[0] == "Python（" and tokens[1:3] == ["派", "森"]  # glued punctuation, like "Hello,"
    japanese = split_tokens(cjk_text("euc_jp"))
    assert "、1990" in japanese and "Guido" in japanese and "開" in japanese


def test_symbol_tokens_are_tokens_but_not_words() -> None:
    tokens = split_tokens("GNU — the | free 3.0 software")
    assert tokens == ["GNU", "—", "the", "|", "free", "3.0", "software"]
    assert [t for t in tokens if is_word(t)] == ["GNU", "the", "free", "3.0", "software"]
    assert is_unsegmented_char("語") and not is_unsegmented_char("한") and not is_unsegmented_char("ab")


def _scanned_as_split(text: str) -> None:
    tokens = scan_tokens(text)
    expected = split_tokens(text)
    assert list(tokens.strings()) == expected
    flags = tokens.flags.tolist()
    assert [bool(f & WORD_TOKEN) for f in flags] == [is_word(t) for t in expected]
    assert [bool(f & LETTER_TOKEN) for f in flags] == [has_letter(t) for t in expected]
    assert [bool(f & UNSEGMENTED_CHAR) for f in flags] == [is_unsegmented_char(t) for t in expected]
    words = tokens.words()
    expected_words = [t for t in expected if is_word(t)]
    assert list(words.strings()) == expected_words
    assert words.lengths().tolist() == [len(w) for w in expected_words]
    assert words.first_appearance()[0].tolist() == first_appearance_ids(expected_words)


def test_scanned_tokens_are_split_tokens_with_their_predicates(udhr: dict[str, str]) -> None:
    assert len(udhr) >= 5
    for text in udhr.values():
        _scanned_as_split(text)


def test_scanned_tokens_of_mixed_cjk_and_latin_text(cjk_text: Callable[[str], str]) -> None:
    for encoding in ("gb2312", "euc_jp"):
        _scanned_as_split(cjk_text(encoding))


MIXED = "abc Zé_9 ٣ 你好，世界。カタカナｶﾀ ไทย 한국어 —|…_ \t\n\u3000\u00a0\x1c\x85 𠀀 ⅫIV ①"


@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from(MIXED) | st.characters(), max_size=80))
def test_scanned_tokens_equal_split_tokens_on_any_text(text: str) -> None:
    _scanned_as_split(text)
