"""Gopher-style heuristics for natural-language documents: each rule returns a drop reason or None.

Rules read a `ProseDoc`, which splits the text into tokens, words, lines and paragraphs once and lazily, so a
document that fails an early rule never pays for the n-gram counts. The rules run in `PROSE_RULES` order
(cheapest first), and the first reason wins.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from pretrain_core.clean.config import ProseThresholds
from pretrain_core.clean.ngram_kernel import RepeatFigures
from pretrain_core.clean.token_kernel import LETTER_TOKEN, UNSEGMENTED_CHAR
from pretrain_core.clean.words import Tokens, is_word, scan_tokens, split_tokens

_BULLETS = tuple("•‣⁃◦●▪■□·*-–−")
_ELLIPSES = ("...", "…")
# Stripped from a word's edges to fold it (stop words here, the quality signals' word lists).
FOLD_PUNCTUATION = string.punctuation + "“”‘’«»„"


@dataclass
class ProseDoc:
    """A document as the prose rules see it, with its language's stop words and unsegmented-text cutoff."""

    text: str
    stop_words: frozenset[str] = field(default_factory=frozenset)
    unsegmented_share: float = 0.5
    unsegmented_ngram_scale: int = 2

    @cached_property
    def tokens(self) -> Tokens:
        return scan_tokens(self.text)

    @cached_property
    def word_tokens(self) -> Tokens:
        return self.tokens.words()

    @cached_property
    def words(self) -> list[str]:
        return list(self.word_tokens.strings())

    @cached_property
    def word_count(self) -> int:
        return len(self.word_tokens)

    @cached_property
    def _word_appearance(self) -> tuple[np.ndarray, np.ndarray]:
        return self.word_tokens.first_appearance()

    @cached_property
    def word_ids(self) -> np.ndarray:
        """Each word as a small integer (equal words, equal ids), the input of the n-gram hashes."""
        return self._word_appearance[0]

    @cached_property
    def distinct_words(self) -> list[str]:
        """Each distinct word once, in the order of `word_ids` (first appearance)."""
        return list(self.word_tokens.strings(self._word_appearance[1]))

    @cached_property
    def word_lengths(self) -> np.ndarray:
        return self.word_tokens.lengths()

    @cached_property
    def repeats(self) -> RepeatFigures:
        """The repeated-n-gram figures, shared by every n the rules and signals ask for."""
        return RepeatFigures(self.word_ids, self.word_lengths)

    @cached_property
    def lines(self) -> list[str]:
        """Non-blank lines, stripped."""
        return [line for line in (raw.strip() for raw in self.text.splitlines()) if line]

    @cached_property
    def paragraphs(self) -> list[str]:
        """Blocks separated by blank lines, stripped."""
        blocks, current = [], []
        for raw in self.text.splitlines():
            if raw.strip():
                current.append(raw.strip())
            elif current:
                blocks.append("\n".join(current))
                current = []
        if current:
            blocks.append("\n".join(current))
        return blocks

    @cached_property
    def unsegmented(self) -> bool:
        """Whether most words are single characters of scripts written without spaces (Chinese, Japanese, Thai)."""
        if not self.word_count or self.text.isascii():
            return False
        return self.word_tokens.count(UNSEGMENTED_CHAR) / self.word_count >= self.unsegmented_share

    def word_span(self, n: int) -> int:
        """n words as this text counts them: n * scale characters in unsegmented text, where a word is a character
        (the n of the repeated-n-gram rule, the word minimum of a repeated line)."""
        return n * self.unsegmented_ngram_scale if self.unsegmented else n


ProseRule = Callable[[ProseDoc, ProseThresholds], str | None]


def word_count(doc: ProseDoc, t: ProseThresholds) -> str | None:
    n = doc.word_count
    if n < t.min_words:
        return "too_few_words"
    if n > t.max_words:
        return "too_many_words"
    return None


def mean_word_length(doc: ProseDoc, t: ProseThresholds) -> str | None:
    if doc.unsegmented or not doc.word_count:
        return None
    mean = int(doc.word_lengths.sum()) / doc.word_count
    return "mean_word_length" if not t.min_mean_word_length <= mean <= t.max_mean_word_length else None


def symbol_ratio(doc: ProseDoc, t: ProseThresholds) -> str | None:
    text = doc.text
    symbols = text.count("#") + text.count("...") + text.count("…")
    return "symbol_ratio" if symbols > t.max_symbol_word_ratio * max(doc.word_count, 1) else None


def bullet_lines(doc: ProseDoc, t: ProseThresholds) -> str | None:
    if not doc.lines:
        return None
    bullets = sum(1 for line in doc.lines if line.startswith(_BULLETS))
    return "bullet_lines" if bullets / len(doc.lines) > t.max_bullet_line_fraction else None


def ellipsis_lines(doc: ProseDoc, t: ProseThresholds) -> str | None:
    if not doc.lines:
        return None
    ellipses = sum(1 for line in doc.lines if line.endswith(_ELLIPSES))
    if ellipses < t.min_ellipsis_lines:
        return None
    return "ellipsis_lines" if ellipses / len(doc.lines) > t.max_ellipsis_line_fraction else None


def placeholder_text(doc: ProseDoc, t: ProseThresholds) -> str | None:
    """Template filler such as lorem ipsum: no language's text (langdetect calls it Catalan), whatever its shape."""
    if not t.placeholder_phrases:
        return None
    lowered = doc.text.lower()
    return "placeholder_text" if any(phrase.lower() in lowered for phrase in t.placeholder_phrases) else None


def alpha_words(doc: ProseDoc, t: ProseThresholds) -> str | None:
    if not len(doc.tokens):
        return None
    alpha = doc.tokens.count(LETTER_TOKEN)
    return "low_alpha_words" if alpha / len(doc.tokens) < t.min_alpha_word_fraction else None


def stop_words(doc: ProseDoc, t: ProseThresholds) -> str | None:
    if not doc.stop_words or t.min_stop_words == 0:
        return None
    found: set[str] = set()
    for word in doc.word_tokens.strings():  # one at a time: most documents have enough after a few words
        candidate = word.lower().strip(FOLD_PUNCTUATION)
        if candidate in doc.stop_words:
            found.add(candidate)
            if len(found) >= t.min_stop_words:
                return None
    return "no_stop_words"


def duplicate_lines(doc: ProseDoc, t: ProseThresholds) -> str | None:
    """Repeated lines of content. A repeated line of fewer than `min_duplicate_line_words` words is structure (an
    attribution after every quote, a record separator, a byline) and does not count as a repeat."""
    min_words = doc.word_span(t.min_duplicate_line_words)
    share, char_share = duplicate_shares(
        doc.lines, len(doc.text), lambda line: sum(1 for token in split_tokens(line) if is_word(token)) >= min_words
    )
    if share > t.max_duplicate_line_fraction or char_share > t.max_duplicate_line_char_fraction:
        return "duplicate_lines"
    return None


def duplicate_paragraphs(doc: ProseDoc, t: ProseThresholds) -> str | None:
    share, char_share = duplicate_shares(doc.paragraphs, len(doc.text))
    if share > t.max_duplicate_paragraph_fraction or char_share > t.max_duplicate_paragraph_char_fraction:
        return "duplicate_paragraphs"
    return None


def top_ngram_share(doc: ProseDoc, t: ProseThresholds) -> str | None:
    """The most frequent word n-gram covers too much of the text (the same phrase over and over)."""
    for n, bound in t.max_top_ngram_char_share.items():
        if top_ngram_chars(doc, n) > bound * len(doc.text):
            return "top_ngram_share"
    return None


def duplicate_ngram_share(doc: ProseDoc, t: ProseThresholds) -> str | None:
    """Too much of the text sits in words covered by an n-gram that already occurred earlier in the document."""
    for size, bound in t.max_duplicate_ngram_char_share.items():
        if repeated_ngram_chars(doc, doc.word_span(size)) > bound * len(doc.text):
            return "duplicate_ngram_share"
    return None


PROSE_RULES: tuple[ProseRule, ...] = (
    word_count,
    placeholder_text,
    mean_word_length,
    symbol_ratio,
    bullet_lines,
    ellipsis_lines,
    alpha_words,
    stop_words,
    duplicate_lines,
    duplicate_paragraphs,
    top_ngram_share,
    duplicate_ngram_share,
)


def first_failure(doc: ProseDoc, thresholds: ProseThresholds) -> str | None:
    """The reason of the first rule the document fails, or None when it passes them all."""
    for rule in PROSE_RULES:
        reason = rule(doc, thresholds)
        if reason is not None:
            return reason
    return None


def duplicate_shares(
    items: Sequence[str], text_chars: int, counts: Callable[[str], bool] = lambda item: True
) -> tuple[float, float]:
    """(share of items repeating an earlier one, share of the text's characters in those repeats), counting only
    the repeats that `counts` accepts."""
    if not items:
        return 0.0, 0.0
    seen: set[str] = set()
    repeats = repeated_chars = 0
    for item in items:
        if item in seen and counts(item):
            repeats += 1
            repeated_chars += len(item)
        else:
            seen.add(item)
    return repeats / len(items), repeated_chars / max(text_chars, 1)


def top_ngram_chars(doc: ProseDoc, n: int) -> int:
    """Characters of the words of the most frequent word n-gram times its count, when it occurs more than once."""
    return doc.repeats.at(n)[0]


def repeated_ngram_chars(doc: ProseDoc, n: int) -> int:
    """Characters of the words covered by any n-gram occurrence that is not the n-gram's first."""
    return doc.repeats.at(n)[1]
