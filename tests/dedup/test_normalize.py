from __future__ import annotations

from collections.abc import Callable

from pretrain_core.dedup.normalize import normalize_text


def test_case_punctuation_and_spacing_do_not_matter(licence: Callable[[str], str]) -> None:
    text = licence("BSD")
    shouted = text.upper().replace("\n", "  \r\n\t").replace(",", " ;")
    assert normalize_text(shouted) == normalize_text(text)
    assert "," not in normalize_text(text) and "\n" not in normalize_text(text)


def test_punctuation_separates_words_instead_of_gluing_them() -> None:
    assert normalize_text("end.Start of—the (next) line!") == "end start of the next line"


def test_full_width_and_cjk_punctuation_fold(tutor: Callable[[str], str]) -> None:
    assert normalize_text("ＶＩＭ　教程，第一讲。") == "vim 教程 第一讲"
    chinese = normalize_text(tutor("zh_cn"))
    assert "。" not in chinese and "，" not in chinese and "移动光标" in chinese


def test_idempotent_on_real_text(licence: Callable[[str], str]) -> None:
    once = normalize_text(licence("GPL-2"))
    assert normalize_text(once) == once


def test_what_is_ignored_is_an_option() -> None:
    text = "Release 2.4, built on 2024-05-01: Fixed."
    assert normalize_text(text) == "release 2 4 built on 2024 05 01 fixed"
    assert normalize_text(text, ignore=["case", "punctuation", "digits"]) == "release 0 0 built on 0 0 0 fixed"
    assert normalize_text(text, ignore=[]) == "Release 2.4, built on 2024-05-01: Fixed."
    assert normalize_text("a  b\n\tc.", ignore=["case"]) == "a b c."
