"""The name lists the tagger reads at run time: IPADIC's Japanese names and the Hundred Family Surnames,
shipped as package data."""

from __future__ import annotations

from importlib import resources

from pretrain_core.pii.name_lists import chinese_surnames, first_names_with_other_senses, japanese_names, names_dir


def test_japanese_lists_are_shipped_with_their_licence() -> None:
    family, given = japanese_names()
    assert len(family) > 10_000 and len(given) > 10_000
    assert {"佐藤", "鈴木", "高橋"} <= set(family) and {"花子", "聖"} <= set(given)
    assert "NAIST" in (names_dir() / "COPYING").read_text(encoding="utf-8")


def test_chinese_surnames_are_the_hundred_family_surnames() -> None:
    surnames = chinese_surnames()
    assert len(surnames) == len(set(surnames)) > 400 and surnames[:4] == ("赵", "钱", "孙", "李")
    assert all(len(s) == 1 for s in surnames) and {"凤", "殳", "仰"} <= set(surnames)


def test_first_names_with_other_senses_are_shipped_with_their_sources() -> None:
    senses = first_names_with_other_senses()
    assert {"Jordan", "Georgia", "Victoria", "Ada", "Ruby", "June", "August"} <= senses
    assert not {"David", "Mary", "Naomi", "Moses"} & senses  # small towns of those names are not well-known places
    sources = (resources.files("pretrain_core") / "data" / "name_senses" / "SOURCES.md").read_text(encoding="utf-8")
    assert "CC BY 4.0" in sources and "GeoNames" in sources
