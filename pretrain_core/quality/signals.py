"""Quality signals: numbers per document that say how much it looks like written text (or hand-written code),
stored as columns so a threshold can change without recomputing them (RedPajama-V2's idea).

Prose signals follow the heuristics of Gopher (word counts and lengths, symbol, bullet and ellipsis shares,
alphabetic words, repeated lines, paragraphs and n-grams), C4 (lines ending in punctuation, boilerplate markers,
lorem ipsum) and FineWeb (short lines, duplicated line characters), plus encoding damage as ftfy measures it and
the share of the dominant script. Code signals follow The Stack / StarCoder (line lengths, alphanumeric share)
and what tells generated, minified and obfuscated files from written ones (comments, indentation, identifier
shapes, long encoded tokens). Each signal is a float, most a share in [0, 1]; counts enter as log1p. The
learned classifier (classifier.py) reads them in the order of `PROSE_SIGNALS` / `CODE_SIGNALS`.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, cached_property

import numpy as np

from pretrain_core.clean import mojibake, prose_rules
from pretrain_core.clean.langid import script_counts
from pretrain_core.clean.token_kernel import LETTER_TOKEN
from pretrain_core.quality import folded_words
from pretrain_core.quality.reference import shipped_records
from pretrain_core.signal_names import (
    CODE_SIGNAL_NAMES,
    PROSE_SIGNAL_NAMES,
)
from pretrain_core.unicode_table import FlagCounts, flag_counts

TERMINAL_CHARS = tuple(".!?:;\"'»”)。！？：；」』）")
BULLET_CHARS = tuple("•‣⁃◦●▪■□·*-–−")
# The words of Cicero's passage that lorem-ipsum generators draw from (the 40 most used).
LOREM_WORDS = frozenset(
    [
        "lorem",
        "ipsum",
        "dolor",
        "sit",
        "amet",
        "consectetur",
        "adipiscing",
        "elit",
        "sed",
        "do",
        "eiusmod",
        "tempor",
        "incididunt",
        "ut",
        "labore",
        "et",
        "dolore",
        "magna",
        "aliqua",
        "enim",
        "ad",
        "minim",
        "veniam",
        "quis",
        "nostrud",
        "exercitation",
        "ullamco",
        "laboris",
        "nisi",
        "aliquip",
        "ex",
        "ea",
        "commodo",
        "consequat",
        "duis",
        "aute",
        "irure",
        "in",
        "reprehenderit",
        "voluptate",
        "velit",
        "esse",
        "cillum",
        "fugiat",
        "nulla",
        "pariatur",
        "excepteur",
        "sint",
        "occaecat",
        "cupidatat",
        "non",
        "proident",
        "sunt",
        "culpa",
        "qui",
        "officia",
        "deserunt",
        "mollit",
        "anim",
        "id",
        "est",
        "laborum",
    ]
)
# C4's boilerplate markers (Raffel et al. 2020), plus the copyright sign of page footers.
_BOILERPLATE_MARKERS = ("javascript", "cookie", "privacy policy", "terms of use", "all rights reserved", "©")
_BOILERPLATE = re.compile("|".join(map(re.escape, _BOILERPLATE_MARKERS)), re.IGNORECASE)
# The four non-ASCII letters IGNORECASE matches to ASCII ones (re's documentation; "İ" also lower-cases to two
# characters). In a text without them, a substring search of the lower-cased text finds what the regex does (a test
# checks every code point), about six times faster.
_ASCII_CASE_TWINS = ("\u0130", "\u0131", "\u017f", "\u212a")
_URL = re.compile(r"(?:https?://|www\.)\S+", re.IGNORECASE)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.\w+")
_DIGIT_LINE = re.compile(r"^[\d\s.,:;%+\-/()|]+$")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ENCODED_TOKEN = re.compile(r"[A-Za-z0-9+/=]{40,}")
# "\b0" written with the 0 first (the lookbehind is "\b" before a word character), so the engine jumps from 0 to 0.
_HEX_LITERAL = re.compile(r"0(?<!\w0)[xX][0-9a-fA-F]+\b")
_DIGIT = re.compile(r"[0-9]")
FUNCTION_WORDS_PER_LANGUAGE = 50
_SCRIPT_SAMPLE_CHARS = 2000
_COMMENT_START = ("#", "//", "/*", "*", "--", '"""', "'''", "<!--", ";")


@dataclass(frozen=True)
class Signal:
    """One named measurement of a document."""

    name: str
    measure: Callable[[ProseView], float] | Callable[[CodeView], float]
    help: str


@cache
def function_words() -> dict[str, frozenset[str]]:
    """Per language of the shipped reference, its most frequent words (characters for Chinese and Japanese),
    case-folded: Gopher's stop-word rule for every language we have edited text in. Real prose of any register
    is full of them; word lists drawn at random (machine filler, keyword lists) and pseudo-Latin are not."""
    counts: dict[str, Counter[str]] = {}
    for record in shipped_records("prose"):
        words = prose_rules.ProseDoc(record["text"]).words
        counts.setdefault(record["lang"], Counter()).update(_folded(word) for word in words)
    return {
        lang: frozenset(
            word for word, _ in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[:FUNCTION_WORDS_PER_LANGUAGE]
        )
        for lang, c in sorted(counts.items())
    }


def _folded(word: str) -> str:
    return word.lower().strip(prose_rules.FOLD_PUNCTUATION)


@dataclass
class ProseView(prose_rules.ProseDoc):
    """A prose document in its language, with the extra views the signals need on top of the clean rules' ones."""

    lang: str = ""

    @cached_property
    def flags(self) -> FlagCounts:
        return flag_counts(self.text)

    @cached_property
    def letters(self) -> int:
        return self.flags.alpha

    @cached_property
    def folded_digests(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Per word, digests of its lower-case and its folded form (`folded_words`); None where the words must be
        folded one by one."""
        return folded_words.folded_digests(self.text, self.word_tokens.starts, self.word_tokens.stops)

    @cached_property
    def folded_distinct_words(self) -> list[str]:
        """The distinct words folded one by one (lower-cased, edge punctuation stripped), for texts whose
        digests cannot be read off the lower-cased text."""
        return [_folded(word) for word in self.distinct_words]

    def distinct_lowered_words(self) -> int:
        """How many distinct words there are once lower-cased."""
        if self.folded_digests is not None:
            return int(np.unique(self.folded_digests[0]).size)
        return len({word.lower() for word in self.distinct_words})

    def listed_word_share(self, listed: frozenset[str]) -> float:
        """The share of words whose folded form is in ``listed``."""
        if self.folded_digests is not None:
            return _share(folded_words.count_listed(self.folded_digests[1], listed), self.word_count)
        occurrences = np.bincount(self.word_ids.astype(np.int64), minlength=len(self.distinct_words))
        listed_rows = np.fromiter((word in listed for word in self.folded_distinct_words), dtype=bool)
        return _share(int(occurrences[listed_rows].sum()), self.word_count)


def function_word_share(doc: ProseView) -> float:
    """NaN for a language without a list: a signal the document cannot have, which the classifier reads as
    neutral (its training mean)."""
    words = function_words().get(doc.lang)
    if words is None:
        return math.nan
    return doc.listed_word_share(words)


@dataclass
class CodeView:
    text: str

    @cached_property
    def flags(self) -> FlagCounts:
        return flag_counts(self.text)

    @cached_property
    def lines(self) -> list[str]:
        return self.text.splitlines() or [""]

    @cached_property
    def identifiers(self) -> list[str]:
        return _IDENTIFIER.findall(self.text)

    @cached_property
    def identifier_lengths(self) -> np.ndarray:
        return np.fromiter(map(len, self.identifiers), dtype=np.int64, count=len(self.identifiers))


def _share(part: float, whole: float) -> float:
    return part / whole if whole else 0.0


def _lines_share(lines: list[str], test: Callable[[str], bool]) -> float:
    return _share(sum(1 for line in lines if test(line)), len(lines))


def links(text: str, lowered: str | None = None) -> int:
    """URLs and e-mail addresses in the text (``lowered``: the text lower-cased, when the caller has it)."""
    # A URL holds "://" or (any case) "www."; an e-mail address "@": most texts skip the scans.
    urls = len(_URL.findall(text)) if "://" in text or "www." in (lowered or text.lower()) else 0
    return urls + (len(_EMAIL.findall(text)) if "@" in text else 0)


def dominant_script_share(text: str) -> float:
    """The share of the letters of the text's start that are in its most used script."""
    sample = text[:_SCRIPT_SAMPLE_CHARS]
    if sample.isascii():
        return 1.0 if any(map(str.isalpha, sample)) else 0.0  # Latin letters only
    counts = script_counts(sample)
    return _share(max(counts.letters.values(), default=0), counts.total_letters)


def mojibake_per_100_letters(text: str, letters: int) -> float:
    """ftfy's count of character sequences typical of mis-decoded text, per 100 letters (of ``letters``)."""
    if text.isascii():
        return 0.0  # every sequence ftfy counts holds a non-ASCII character
    return min(_share(100.0 * mojibake.badness(text[:20_000]), min(letters, 20_000)), 10.0)


def has_boilerplate(text: str, lowered: str | None = None) -> bool:
    """Whether the text holds one of C4's boilerplate markers, in any case (``lowered``: the text lower-cased)."""
    if any(twin in text for twin in _ASCII_CASE_TWINS):
        return _BOILERPLATE.search(text) is not None
    lowered = lowered or text.lower()
    return any(marker in lowered for marker in _BOILERPLATE_MARKERS)


def boilerplate_line_share(doc: ProseView) -> float:
    if not has_boilerplate(doc.text):
        return 0.0  # lines are stripped pieces of the text: none can hold a marker the text does not
    return _lines_share(doc.lines, has_boilerplate)


def _repeated_ngram_share(n: int) -> Callable[[ProseView], float]:
    return lambda doc: _share(prose_rules.repeated_ngram_chars(doc, doc.word_span(n)), len(doc.text))


def _top_ngram_share(n: int) -> Callable[[ProseView], float]:
    return lambda doc: _share(prose_rules.top_ngram_chars(doc, n), len(doc.text))


PROSE_SIGNALS: tuple[Signal, ...] = (
    Signal("log_words", lambda d: math.log1p(d.word_count), "log(1 + words)"),
    Signal(
        "mean_word_length", lambda d: float(np.mean(d.word_lengths)) if d.word_count else 0.0, "characters per word"
    ),
    Signal("unique_word_share", lambda d: _share(d.distinct_lowered_words(), d.word_count), "distinct words"),
    Signal(
        "symbol_word_ratio",
        lambda d: _share(d.text.count("#") + d.text.count("...") + d.text.count("…"), d.word_count),
        "hashes and ellipses per word (Gopher)",
    ),
    Signal("alpha_token_share", lambda d: _share(d.tokens.count(LETTER_TOKEN), len(d.tokens)), "tokens with letters"),
    Signal("bullet_line_share", lambda d: _lines_share(d.lines, lambda x: x.startswith(BULLET_CHARS)), "Gopher"),
    Signal("ellipsis_line_share", lambda d: _lines_share(d.lines, lambda x: x.endswith(("...", "…"))), "Gopher"),
    Signal("terminal_line_share", lambda d: _lines_share(d.lines, lambda x: x.endswith(TERMINAL_CHARS)), "C4"),
    Signal("short_line_share", lambda d: _lines_share(d.lines, lambda x: len(x.split()) < 4), "FineWeb"),
    Signal("digit_line_share", lambda d: _lines_share(d.lines, lambda x: bool(_DIGIT_LINE.match(x))), "tables"),
    Signal("boilerplate_line_share", boilerplate_line_share, "C4"),
    Signal("url_token_share", lambda d: _share(links(d.text), len(d.tokens)), "links and e-mail addresses"),
    Signal(
        "lorem_word_share",
        lambda d: d.listed_word_share(LOREM_WORDS),
        "words of lorem ipsum (C4)",
    ),
    Signal(
        "duplicate_line_char_share",
        lambda d: prose_rules.duplicate_shares(d.lines, len(d.text))[1],
        "characters in repeated lines (Gopher)",
    ),
    Signal(
        "duplicate_paragraph_char_share",
        lambda d: prose_rules.duplicate_shares(d.paragraphs, len(d.text))[1],
        "characters in repeated paragraphs (Gopher)",
    ),
    Signal("top_2gram_char_share", _top_ngram_share(2), "Gopher"),
    Signal("top_3gram_char_share", _top_ngram_share(3), "Gopher"),
    Signal("top_4gram_char_share", _top_ngram_share(4), "Gopher"),
    Signal("repeated_5gram_char_share", _repeated_ngram_share(5), "Gopher"),
    Signal("repeated_8gram_char_share", _repeated_ngram_share(8), "Gopher"),
    Signal("digit_char_share", lambda d: _share(d.flags.digit, len(d.text)), "digits"),
    Signal("upper_letter_share", lambda d: _share(d.flags.upper, d.letters), "capitals of letters"),
    Signal("mojibake_per_100_letters", lambda d: mojibake_per_100_letters(d.text, d.letters), "ftfy's badness"),
    Signal("replacement_char_share", lambda d: _share(d.text.count("\ufffd"), len(d.text)), "U+FFFD"),
    Signal("dominant_script_share", lambda d: dominant_script_share(d.text), "letters in the most used script"),
    Signal("function_word_share", function_word_share, "words among the language's 50 most frequent (Gopher)"),
)


def _comment_line_share(doc: CodeView) -> float:
    return _lines_share(doc.lines, lambda line: line.lstrip().startswith(_COMMENT_START))


CODE_SIGNALS: tuple[Signal, ...] = (
    Signal("log_chars", lambda d: math.log1p(len(d.text)), "log(1 + characters)"),
    Signal("log_mean_line_length", lambda d: math.log1p(_share(len(d.text), len(d.lines))), "The Stack"),
    Signal("log_max_line_length", lambda d: math.log1p(max(map(len, d.lines))), "The Stack"),
    Signal("long_line_share", lambda d: _lines_share(d.lines, lambda x: len(x) > 200), "lines over 200 characters"),
    Signal("alnum_share", lambda d: _share(d.flags.word - d.text.count("_"), len(d.text)), "StarCoder"),
    Signal("space_share", lambda d: _share(d.flags.space, len(d.text)), "whitespace"),
    Signal("blank_line_share", lambda d: _lines_share(d.lines, lambda x: not x.strip()), "layout"),
    Signal("indented_line_share", lambda d: _lines_share(d.lines, lambda x: x[:1] in (" ", "\t")), "layout"),
    Signal("comment_line_share", _comment_line_share, "lines that start a comment"),
    Signal(
        "mean_identifier_length",
        lambda d: float(np.mean(d.identifier_lengths)) if d.identifiers else 0.0,
        "characters per identifier",
    ),
    Signal(
        "short_identifier_share",
        lambda d: _share(int(np.count_nonzero(d.identifier_lengths <= 2)), len(d.identifiers)),
        "",
    ),
    Signal(
        "digit_identifier_share",
        lambda d: _share(sum(map(bool, map(_DIGIT.search, d.identifiers))), len(d.identifiers)),
        "identifiers holding digits",
    ),
    Signal("unique_identifier_share", lambda d: _share(len(set(d.identifiers)), len(d.identifiers)), "distinct names"),
    Signal("hex_literal_share", lambda d: _share(len(_HEX_LITERAL.findall(d.text)), len(d.identifiers) + 1), ""),
    Signal("encoded_token_chars", lambda d: _share(sum(map(len, _ENCODED_TOKEN.findall(d.text))), len(d.text)), ""),
    Signal("digit_char_share", lambda d: _share(d.flags.digit, len(d.text)), "number arrays"),
    Signal(
        "duplicate_line_share",
        lambda d: prose_rules.duplicate_shares([x.strip() for x in d.lines if x.strip()], len(d.text))[0],
        "repeated non-blank lines",
    ),
)

if (
    tuple(signal.name for signal in PROSE_SIGNALS) != PROSE_SIGNAL_NAMES
    or tuple(signal.name for signal in CODE_SIGNALS) != CODE_SIGNAL_NAMES
):
    raise ImportError("quality signals and signal_names.py disagree: the schema's columns must name every signal")


def prose_signals(text: str, lang: str = "", unsegmented_share: float = 0.5, ngram_scale: int = 2) -> np.ndarray:
    """The prose signals of one document in language `lang`, in `PROSE_SIGNALS` order (NaN: not applicable)."""
    doc = ProseView(text, frozenset(), unsegmented_share, ngram_scale, lang)
    return np.array([signal.measure(doc) for signal in PROSE_SIGNALS], dtype=np.float64)  # type: ignore[arg-type]


def code_signals(text: str) -> np.ndarray:
    """The code signals of one source file, in `CODE_SIGNALS` order."""
    doc = CodeView(text)
    return np.array([signal.measure(doc) for signal in CODE_SIGNALS], dtype=np.float64)  # type: ignore[arg-type]
