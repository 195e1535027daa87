"""Words as the heuristics count them, for spaced and unspaced scripts alike.

Gopher's thresholds assume words separated by spaces. Chinese, Japanese, Thai, Lao, Khmer and Burmese put no
spaces between words, so there each character counts as one word (a Chinese word averages 1.5 characters, close
enough for thresholds such as "at least 50 words"). Punctuation glued to such characters is not a word, just as
the comma in "Hello," is not a word of its own.
"""

from __future__ import annotations

import re

_UNSEGMENTED_CLASS = (
    "\u0e00-\u0eff"  # Thai, Lao
    "\u1000-\u109f"  # Myanmar
    "\u1780-\u17ff"  # Khmer
    "\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f"  # kana
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"  # Han
)
_ALNUM = re.compile(r"[^\W_]")
_LETTER = re.compile(r"[^\W\d_]")
_UNSEGMENTED_CHAR = re.compile(f"[{_UNSEGMENTED_CLASS}]")
_UNSEGMENTED_PIECES = re.compile(f"[{_UNSEGMENTED_CLASS}]|[^{_UNSEGMENTED_CLASS}]+")


def split_tokens(text: str) -> list[str]:
    """Whitespace tokens, with every unsegmented-script character split off as a token of its own.

    Pieces of such tokens without a letter or digit (the "，" in "你好，世界") are dropped; whitespace tokens made
    only of symbols ("—", "|") are kept, because Gopher's alphabetic-word rule counts them against a document.
    """
    tokens: list[str] = []
    for token in text.split():
        if token.isascii() or not _UNSEGMENTED_CHAR.search(token):
            tokens.append(token)
            continue
        tokens.extend(piece for piece in _UNSEGMENTED_PIECES.findall(token) if _has_alnum(piece))
    return tokens


def has_letter(token: str) -> bool:
    """A token with at least one letter (of any script): Gopher's "alphabetic word"."""
    return token.isalpha() or _LETTER.search(token) is not None


def is_word(token: str) -> bool:
    """A token with at least one letter or digit: what word counts and word lengths are about."""
    return _has_alnum(token)


def is_unsegmented_char(token: str) -> bool:
    """A one-character word of a script written without spaces."""
    return len(token) == 1 and _UNSEGMENTED_CHAR.match(token) is not None


def _has_alnum(text: str) -> bool:
    return text.isalnum() or _ALNUM.search(text) is not None
