"""`langid.script_counts` (a compiled pass) counts exactly what the per-character loop it replaced counted."""

from __future__ import annotations

import bisect
from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from pretrain_core.clean import langid
from pretrain_core.clean.langid import ScriptCounts, script_counts

_STARTS = [first for first, _, _ in langid._SCRIPT_RANGES]


def _script_of(char: str) -> str | None:
    code = ord(char)
    index = bisect.bisect_right(_STARTS, code) - 1
    if index < 0:
        return None
    first, last, script = langid._SCRIPT_RANGES[index]
    return script if first <= code <= last else None


def loop_script_counts(text: str) -> ScriptCounts:
    """The per-character loop `script_counts` was."""
    words: dict[str, int] = {}
    letters: dict[str, int] = {}
    total_words = total_letters = 0
    previous: str | None = None
    for char in text:
        if not char.isalpha():
            previous = None
            continue
        total_letters += 1
        script = "latin" if char.isascii() else _script_of(char) or ""
        if script:
            letters[script] = letters.get(script, 0) + 1
        if script == previous and script not in langid._UNSEGMENTED_SCRIPTS:
            continue
        previous = script
        total_words += 1
        if script:
            words[script] = words.get(script, 0) + 1
    return ScriptCounts(words, letters, total_words, total_letters)


def _same(text: str) -> None:
    ours, loop = script_counts(text), loop_script_counts(text)
    assert ours == loop
    assert list(ours.letters) == list(loop.letters) and list(ours.words) == list(loop.words)  # insertion order too


def test_real_text_in_many_scripts(
    licence: Callable[[str], str], cjk_text: Callable[[str], str], udhr: dict[str, str]
) -> None:
    for text in (licence("GPL-2"), cjk_text("gb2312"), cjk_text("euc_jp"), cjk_text("euc_kr"), *udhr.values()):
        _same(text)
    _same("Ελληνικά и русский, 한국어 ไทย ᚠᛇ")
    _same("")
    _same("x\ud800y ĳ ǅ ª º")  # a lone surrogate, ligatures, title case, ordinal indicators


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=80))
def test_any_text(text: str) -> None:
    _same(text)
