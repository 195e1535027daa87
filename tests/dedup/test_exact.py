from __future__ import annotations

from collections.abc import Callable

from pretrain_core.dedup.exact import exact_key
from pretrain_core.dedup.normalize import normalize_text


def _key(text: str, namespace: str = "") -> bytes:
    return exact_key(normalize_text(text).encode(), text, namespace)


def test_reformatted_copies_share_a_key_and_other_texts_do_not(licence: Callable[[str], str]) -> None:
    gpl2 = licence("GPL-2")
    assert _key(gpl2) == _key(gpl2.upper().replace("\n", " "))
    assert _key(gpl2) != _key(licence("GPL-3"))
    assert _key(gpl2) != _key(gpl2.replace("warranty", "guarantee", 1))
    assert len(_key(gpl2)) == 16


def test_texts_without_words_are_keyed_by_their_raw_form() -> None:
    assert normalize_text("!!!") == normalize_text("???") == ""
    assert _key("!!!") != _key("???")
    assert _key("!!!") == _key("!!!")


def test_namespaces_separate_scopes(licence: Callable[[str], str]) -> None:
    text = licence("BSD")
    assert _key(text, "general") != _key(text, "code")
    assert _key(text, "code") == _key(text, "code")
