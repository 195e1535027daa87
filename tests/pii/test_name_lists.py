"""The tagger's name lists: Faker's names for every language and IPADIC's Japanese names, shipped with the repo."""

from __future__ import annotations

from pretrain_core.pii.name_lists import REFERENCE_NAMES, chinese_surnames, is_cjk, japanese_names, name_lists


def test_japanese_lists_are_shipped_with_their_licence() -> None:
    family, given = japanese_names()
    assert len(family) > 10_000 and len(given) > 10_000
    assert {"佐藤", "鈴木", "高橋"} <= set(family) and {"花子", "聖"} <= set(given)
    assert "NAIST" in (REFERENCE_NAMES / "COPYING").read_text(encoding="utf-8")


def test_lists_hold_latin_names_per_word_and_cjk_names_as_strings() -> None:
    lists = name_lists()
    assert {"Anna", "Müller", "Dubois"} <= set(lists.first) | set(lists.last)
    assert "佐藤" in lists.cjk_family and "欧阳" in lists.cjk_family  # Japanese and Chinese compound family names
    assert all(is_cjk(n) and len(n) > 1 for n in lists.cjk_family + lists.cjk_given)
    assert lists == name_lists() and lists.first == sorted(lists.first)  # cached and deterministic


def test_chinese_surnames_are_the_hundred_family_surnames() -> None:
    surnames = chinese_surnames()
    assert len(surnames) == len(set(surnames)) > 400 and surnames[:4] == ("赵", "钱", "孙", "李")
    assert all(len(s) == 1 for s in surnames) and {"凤", "殳", "仰"} <= set(name_lists().last)
