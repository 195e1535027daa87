"""Real text for the cleaning tests, all shipped in the repo: licences and man pages, CPython's CJK test texts,
UDHR Article 1."""

from __future__ import annotations

import sysconfig
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.shipped_text import CJK_TEXTS, LICENCES
from tests.shipped_text import MANUAL_PAGES as MAN_PAGES

# Article 1 of the Universal Declaration of Human Rights in the official translations published by the UN
# OHCHR (https://www.ohchr.org/en/human-rights/universal-declaration/translations), free to reproduce.
UDHR_ARTICLE_1 = {
    "en": "All human beings are born free and equal in dignity and rights. They are endowed with reason and "
    "conscience and should act towards one another in a spirit of brotherhood.",
    "de": "Alle Menschen sind frei und gleich an Würde und Rechten geboren. Sie sind mit Vernunft und Gewissen "
    "begabt und sollen einander im Geist der Brüderlichkeit begegnen.",
    "fr": "Tous les êtres humains naissent libres et égaux en dignité et en droits. Ils sont doués de raison et de "
    "conscience et doivent agir les uns envers les autres dans un esprit de fraternité.",
    "es": "Todos los seres humanos nacen libres e iguales en dignidad y derechos y, dotados como están de razón y "
    "conciencia, deben comportarse fraternalmente los unos con los otros.",
    "ru": "Все люди рождаются свободными и равными в своем достоинстве и правах. Они наделены разумом и совестью и "
    "должны поступать в отношении друг друга в духе братства.",
    "zh": "人人生而自由，在尊严和权利上一律平等。他们赋有理性和良心，并应以兄弟关系的精神相对待。",
    "ja": "すべての人間は、生まれながらにして自由であり、かつ、尊厳と権利とについて平等である。人間は、理性と良心とを"
    "授けられており、互いに同胞の精神をもって行動しなければならない。",
    "ko": "모든 인간은 태어날 때부터 자유로우며 그 존엄과 권리에 있어 동등하다. 인간은 천부적으로 이성과 양심을 "
    "부여받았으며 서로 형제애의 정신으로 행동하여야 한다.",
}


@pytest.fixture(scope="session")
def udhr() -> dict[str, str]:
    return UDHR_ARTICLE_1


@pytest.fixture(scope="session")
def licence() -> Callable[[str], str]:
    """A licence text as Debian ships it (base-files' common-licenses), by file name (GPL-3, Apache-2.0, ...)."""

    def read(name: str) -> str:
        return (LICENCES / name).read_text(encoding="utf-8")

    return read


@pytest.fixture(scope="session")
def cjk_text() -> Callable[[str], str]:
    """Real Chinese, Japanese and Korean prose from CPython's codec tests (gb2312, euc_jp, euc_kr, ...)."""

    def read(codec: str) -> str:
        return (CJK_TEXTS / f"{codec}-utf8.txt").read_text(encoding="utf-8")

    return read


@pytest.fixture(scope="session")
def man_page() -> Callable[..., str]:
    """A man page of the demo corpus as groff renders it to plain text, by name and section ('chown.2'), optionally
    a translation (lang='de', 'zh_CN', ...): pretrain_core/data/demo/text/manpages/LANG/manN/NAME.N.txt."""

    def read(page: str, lang: str = "en") -> str:
        section = page.rsplit(".", 1)[1][0]  # "NULL.3const" is in man3
        return (MAN_PAGES / lang / f"man{section}" / f"{page}.txt").read_text(encoding="utf-8")

    return read


@pytest.fixture(scope="session")
def stdlib_source() -> Callable[[str], str]:
    """A module of the Python standard library, as source text."""

    def read(relative: str) -> str:
        return (Path(sysconfig.get_paths()["stdlib"]) / relative).read_text(encoding="utf-8")

    return read
