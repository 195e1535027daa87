"""The name lists the tagger reads at run time: the Hundred Family Surnames and IPADIC's Japanese family and
given names, shipped as package data under `pretrain_core/data/names`, and the first names that have another sense
(`pretrain_core/data/name_senses`, built by scripts/build_name_senses.py).

Chinese and Japanese names are not split into words by spaces, so beside the lists inside the model (Faker's
names, see `pretrain_eval.pii_tagger.names`) the tagger matches these longer lists as whole strings: almost
every kanji occurs in some name and only the string says whether a run of characters is one.
"""

from __future__ import annotations

import functools
from importlib import resources
from importlib.resources.abc import Traversable

NAME_SENSES_FILE = "first_names_with_other_senses.tsv"


def names_dir() -> Traversable:
    return resources.files("pretrain_core") / "data" / "names"


@functools.cache
def reference_names(file_name: str) -> tuple[str, ...]:
    """One name per line of a list under `pretrain_core/data/names`."""
    text = (names_dir() / file_name).read_text(encoding="utf-8")
    return tuple(line for line in text.splitlines() if line)


def chinese_surnames() -> tuple[str, ...]:
    """The one-character surnames of the Hundred Family Surnames (百家姓): Faker knows only the most common ones."""
    return reference_names("zh_surnames.txt")


def japanese_names() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """IPADIC's Japanese family and given names (kanji and katakana, one to four characters)."""
    return reference_names("ja_family_names.txt"), reference_names("ja_given_names.txt")


@functools.cache
def first_names_with_other_senses() -> frozenset[str]:
    """First names that also name a well-known place, a programming language, a month or a weekday ("Jordan",
    "Ruby", "June"), as written: alone, such a word is not taken for a person."""
    text = (resources.files("pretrain_core") / "data" / "name_senses" / NAME_SENSES_FILE).read_text(encoding="utf-8")
    return frozenset(line.split("\t", 1)[0] for line in text.splitlines() if line)
