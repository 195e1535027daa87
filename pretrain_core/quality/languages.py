"""The language a prose document is bucketed and scored under. Input that never went through the clean stage
(plain JSONL run alone) arrives as 'und'; left so, every document would share one language's cut-offs and none
would reach its language's own model, so the stage detects it with the clean stage's detector."""

from __future__ import annotations

from collections.abc import Callable

from pretrain_core.clean.config import LangIdConfig
from pretrain_core.clean.langid import UNDETERMINED, detect_language

_LANGID = LangIdConfig()  # the clean stage's defaults


def is_undetermined(lang: str | None) -> bool:
    return not lang or lang == UNDETERMINED


def known_languages(langs: list[str], text_of: Callable[[int], str], prose: list[bool]) -> tuple[list[str], int]:
    """`langs` with each undetermined prose document's language detected from its text, and how many were."""
    known, detected = list(langs), 0
    for row, lang in enumerate(langs):
        if prose[row] and is_undetermined(lang):
            known[row] = detect_language(text_of(row), _LANGID).lang
            detected += 1
    return known, detected
