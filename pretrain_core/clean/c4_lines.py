"""C4's line-level filters (Raffel et al. 2020): delete boilerplate lines, drop pages with too little left.

Unlike the other rules these edit the text. They suit web crawls, where menus, cookie banners and "read more"
lines sit between sentences, and harm anything written in lines rather than sentences (man pages, poetry, code
in prose), so the stage applies them only when `C4LinesConfig.enabled` is set.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pretrain_core.clean.config import C4LinesConfig
from pretrain_core.clean.words import is_word, split_tokens

_TERMINAL = (".", "!", "?", '"', "”", "。", "！", "？", "」", "』")
_POLICY = ("terms of use", "privacy policy", "cookie policy", "uses cookies", "use of cookies", "use cookies")
_SENTENCE_END = re.compile(r"[.!?]+(?=[\"'”’)\]]*(?:\s|$))|[。！？]+")


@dataclass(frozen=True)
class C4Result:
    """The text that remains, how many characters went, and the drop reason if the page as a whole fails."""

    text: str
    chars_removed: int
    reason: str | None


def filter_lines(text: str, cfg: C4LinesConfig) -> C4Result:
    """Apply C4's page and line filters to one document."""
    lowered = text.lower()
    if cfg.drop_lorem_ipsum and "lorem ipsum" in lowered:
        return C4Result(text, 0, "c4_lorem_ipsum")
    if cfg.drop_curly_brace and "{" in text:
        return C4Result(text, 0, "c4_curly_brace")
    kept = [line for line in (raw.strip() for raw in text.splitlines()) if line and _keep_line(line, cfg)]
    remaining = "\n".join(kept)
    removed = len(text) - len(remaining)
    if not kept:
        return C4Result(remaining, removed, "c4_no_lines_left")
    if len(_SENTENCE_END.findall(remaining)) < cfg.min_sentences:
        return C4Result(remaining, removed, "c4_too_few_sentences")
    return C4Result(remaining, removed, None)


def _keep_line(line: str, cfg: C4LinesConfig) -> bool:
    if cfg.require_terminal_punctuation and not line.endswith(_TERMINAL):
        return False
    if cfg.min_words_per_line and sum(1 for token in split_tokens(line) if is_word(token)) < cfg.min_words_per_line:
        return False
    lowered = line.lower()
    if cfg.drop_javascript_lines and "javascript" in lowered:
        return False
    return not (cfg.drop_policy_lines and any(phrase in lowered for phrase in _POLICY))
