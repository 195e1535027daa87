from __future__ import annotations

from collections.abc import Callable

from pretrain_core.clean.words import is_unsegmented_char, is_word, split_tokens


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
