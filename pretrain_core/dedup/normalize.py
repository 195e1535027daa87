"""Text normalisation shared by exact hashing and shingling, so both see the same notion of "the same text"."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection
from typing import Literal

# What normalisation may ignore: letter case, punctuation (words only, split at anything else), digit values.
Ignorable = Literal["case", "punctuation", "digits"]
DEFAULT_IGNORE: tuple[Ignorable, ...] = ("case", "punctuation")

# Runs of word characters (letters, digits, marks of any script, underscore): everything else separates words.
_WORD = re.compile(r"\w+")
_DIGITS = re.compile(r"\d+")


def normalize_text(text: str, ignore: Collection[Ignorable] = DEFAULT_IGNORE) -> str:
    """NFKC, then what ``ignore`` names folded away; words joined by single spaces.

    By default (case and punctuation, as datatrove does) punctuation and whitespace only separate words, so that
    "end.Start" stays two words; without "punctuation" words are whitespace-separated and keep their punctuation.
    "digits" writes every run of digits as 0 (dates and counts then never tell copies apart). NFKC folds
    full-width and compatibility forms, common in CJK text, onto their plain equivalents.
    """
    text = unicodedata.normalize("NFKC", text)
    if "case" in ignore:
        text = text.lower()
    if "digits" in ignore:
        text = _DIGITS.sub("0", text)
    words = _WORD.findall(text) if "punctuation" in ignore else text.split()
    return " ".join(words)
