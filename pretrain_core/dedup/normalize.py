"""Text normalisation shared by exact hashing and shingling, so both see the same notion of "the same text"."""

from __future__ import annotations

import re
import unicodedata

# Runs of word characters (letters, digits, marks of any script, underscore): everything else separates words.
_WORD = re.compile(r"\w+")


def normalize_text(text: str) -> str:
    """NFKC, lowercase, then the words joined by single spaces: punctuation and whitespace only separate words.

    Punctuation separates rather than vanishes so that "end.Start" stays two words; NFKC folds full-width and
    compatibility forms, common in CJK text, onto their plain equivalents.
    """
    return " ".join(_WORD.findall(unicodedata.normalize("NFKC", text).lower()))
