"""Plain definitions of the token predicates `clean/token_kernel.py` computes, as regular expressions over strings."""

from __future__ import annotations

import re

from pretrain_core.clean.words import UNSEGMENTED_CLASS

_LETTER = re.compile(r"[^\W\d_]")
_UNSEGMENTED_CHAR = re.compile(f"[{UNSEGMENTED_CLASS}]")


def has_letter(token: str) -> bool:
    """A token with at least one letter (of any script): Gopher's "alphabetic word"."""
    return token.isalpha() or _LETTER.search(token) is not None


def is_unsegmented_char(token: str) -> bool:
    """A one-character word of a script written without spaces."""
    return len(token) == 1 and _UNSEGMENTED_CHAR.match(token) is not None


def first_appearance_ids(words: list[str]) -> list[int]:
    vocabulary: dict[str, int] = {}
    return [vocabulary.setdefault(word, len(vocabulary)) for word in words]
