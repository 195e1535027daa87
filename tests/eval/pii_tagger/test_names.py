"""The gazetteer built into the tagger: Faker's names for every language beside the shipped CJK lists."""

from __future__ import annotations

from pretrain_core.pii.name_lists import chinese_surnames
from pretrain_eval.pii_tagger.names import is_cjk, name_lists


def test_lists_hold_latin_names_per_word_and_cjk_names_as_strings() -> None:
    lists = name_lists()
    assert {"Anna", "Müller", "Dubois"} <= set(lists.first) | set(lists.last)
    assert "佐藤" in lists.cjk_family and "欧阳" in lists.cjk_family  # Japanese and Chinese compound family names
    assert all(is_cjk(n) and len(n) > 1 for n in lists.cjk_family + lists.cjk_given)
    assert lists == name_lists() and lists.first == sorted(lists.first)  # cached and deterministic


def test_every_hundred_family_surname_is_a_last_name() -> None:
    assert set(chinese_surnames()) <= set(name_lists().last)
