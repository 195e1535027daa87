"""Faker's first and last names, per locale, for the tagger's gazetteer and its training examples.

Lists are what let a linear tagger generalise from the names it trained on to names it never saw in an example.
Latin-script names are matched as words, so the lists span every Faker locale whose names turn up in English,
German and French text, not only the locales examples are made from.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

from faker import Faker

from pretrain_core.pii.name_lists import chinese_surnames, japanese_names

# Faker locales whose names make the lists, per language of the tagger. Examples are made from the first ones.
LIST_LOCALES = {
    "en": ("en_US", "en_GB", "en_IE", "en_NZ", "en_IN"),
    "de": ("de_DE", "de_AT", "de_CH", "nl_NL", "pl_PL", "tr_TR", "it_IT", "cs_CZ"),
    "fr": ("fr_FR", "fr_CH", "fr_CA", "es_ES", "pt_PT"),
    "zh": ("zh_CN", "zh_TW"),
    "ja": ("ja_JP",),
}


class NameLists(NamedTuple):
    first: list[str]  # Faker's names: Latin-script ones matched per word, CJK ones per character
    last: list[str]
    cjk_family: list[str]  # CJK family and given names of two or more characters, matched as strings
    cjk_given: list[str]


@functools.cache
def faker_names(locale: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Faker's first and last names of a locale (cached: building a Faker is slow)."""
    provider = next(p for p in Faker(locale).get_providers() if "person" in type(p).__module__)
    return tuple(provider.first_names), tuple(provider.last_names)


def is_cjk(name: str) -> bool:
    return any("\u3040" <= c <= "\u30ff" or "\u3400" <= c <= "\u9fff" or "\uf900" <= c <= "\ufaff" for c in name)


@functools.cache
def name_lists() -> NameLists:
    """Every list the tagger's gazetteer holds, sorted."""
    first: set[str] = set()
    last: set[str] = set()
    for locales in LIST_LOCALES.values():
        for locale in locales:
            first_names, last_names = faker_names(locale)
            first.update(first_names)
            last.update(last_names)
    last.update(chinese_surnames())
    family, given = japanese_names()
    cjk_family = {n for n in (*last, *family) if is_cjk(n) and len(n) > 1}
    cjk_given = {n for n in (*first, *given) if is_cjk(n) and len(n) > 1}
    return NameLists(sorted(first), sorted(last), sorted(cjk_family), sorted(cjk_given))
