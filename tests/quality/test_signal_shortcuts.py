"""The signals' shortcuts (one compiled pass for character counts, scans skipped when a text cannot match, words
matched by digests of the lower-cased text) give exactly what the plain definitions give, on every item of the
labelled quality set (mojibake, boilerplate, link spam, code in three languages, prose in seven) and on random
text."""

from __future__ import annotations

import math
import re
import string
import sys

import ftfy.badness
from hypothesis import given, settings
from hypothesis import strategies as st

from pretrain_core.quality import signals
from pretrain_core.quality.signals import code_signals, prose_signals
from pretrain_core.signal_names import CODE_SIGNAL_NAMES, PROSE_SIGNAL_NAMES
from tests.quality.conftest import _labelled_items

_PUNCTUATION = string.punctuation + "“”‘’«»„"


def _share(part: float, whole: float) -> float:
    return part / whole if whole else 0.0


def plain_prose(text: str, lang: str) -> dict[str, float]:
    """The prose signals the shortcuts touch, by their plain definitions."""
    doc = signals.ProseView(text, frozenset(), 0.5, 2, lang)
    letters = sum(map(str.isalpha, text))
    mojibake = 0.0
    if not text.isascii():
        mojibake = min(_share(100.0 * ftfy.badness.badness(text[:20_000]), min(letters, 20_000)), 10.0)
    links = len(signals._URL.findall(text)) + (len(signals._EMAIL.findall(text)) if "@" in text else 0)
    folded = [w.lower().strip(_PUNCTUATION) for w in doc.words]
    words = signals.function_words().get(lang)
    return {
        "digit_char_share": _share(sum(map(str.isdigit, text)), len(text)),
        "upper_letter_share": _share(sum(map(str.isupper, text)), letters),
        "mojibake_per_100_letters": mojibake,
        "boilerplate_line_share": _share(sum(bool(signals._BOILERPLATE.search(x)) for x in doc.lines), len(doc.lines)),
        "url_token_share": _share(links, len(doc.tokens)),
        "lorem_word_share": _share(sum(w in signals.LOREM_WORDS for w in folded), len(doc.words)),
        "unique_word_share": _share(len({w.lower() for w in doc.words}), len(doc.words)),
        "function_word_share": math.nan if words is None else _share(sum(w in words for w in folded), len(doc.words)),
    }


def plain_code(text: str) -> dict[str, float]:
    identifiers = signals._IDENTIFIER.findall(text)
    return {
        "alnum_share": _share(sum(map(str.isalnum, text)), len(text)),
        "space_share": _share(sum(map(str.isspace, text)), len(text)),
        "digit_char_share": _share(sum(map(str.isdigit, text)), len(text)),
        "mean_identifier_length": sum(map(len, identifiers)) / len(identifiers) if identifiers else 0.0,
        "short_identifier_share": _share(sum(len(i) <= 2 for i in identifiers), len(identifiers)),
        "digit_identifier_share": _share(sum(any(c.isdigit() for c in i) for i in identifiers), len(identifiers)),
        "hex_literal_share": _share(len(re.findall(r"\b0[xX][0-9a-fA-F]+\b", text)), len(identifiers) + 1),
    }


def _check_prose(text: str, lang: str) -> None:
    ours = dict(zip(PROSE_SIGNAL_NAMES, prose_signals(text, lang).tolist(), strict=True))
    for name, value in plain_prose(text, lang).items():
        assert ours[name] == value or (math.isnan(ours[name]) and math.isnan(value)), (name, text[:80])


def _check_code(text: str) -> None:
    ours = dict(zip(CODE_SIGNAL_NAMES, code_signals(text).tolist(), strict=True))
    for name, value in plain_code(text).items():
        assert math.isclose(ours[name], value, rel_tol=1e-12), (name, text[:80])


def test_every_labelled_item_gets_the_plain_values() -> None:
    items = _labelled_items()
    assert {item.get("kind", "good") for item in items} >= {"mojibake", "boilerplate", "good"}
    for item in items:
        if item.get("domain") == "code":
            _check_code(item["text"])
        else:
            _check_prose(item["text"], item["lang"])


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=120), st.sampled_from(["en", "de", "ru", "zh", "xx"]))
def test_any_text_gets_the_plain_values(text: str, lang: str) -> None:
    _check_prose(text, lang)
    _check_code(text)


_CODE_PIECES = st.sampled_from(["0x1F", "0X", "a0x2", "_0xff", "x9", "é0x3", "0xg", " ", "\n", "(", "12", "ab_3"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_CODE_PIECES, st.text(alphabet="0xXaF9_ é.", max_size=6)), max_size=16).map("".join))
def test_code_with_hex_literals_and_numbered_names_gets_the_plain_values(text: str) -> None:
    _check_code(text)


def test_lower_casing_matches_as_ignorecase_does_but_for_the_four_twins() -> None:
    """The boilerplate shortcut's premise, over every code point: outside the four twins, a character matches a
    marker's character under IGNORECASE exactly when it lower-cases to it, and no other character lower-cases to
    more than one."""
    every = "".join(chr(point) for point in range(sys.maxunicode + 1) if not 0xD800 <= point <= 0xDFFF)
    twins = set(signals._ASCII_CASE_TWINS)
    for char in set("".join(signals._BOILERPLATE_MARKERS)):
        matched = set(re.findall(re.escape(char), every, re.IGNORECASE)) - twins
        assert matched == {c for c in every if c.lower() == char} - twins, char
    assert {c for c in every if len(c.lower()) != 1} <= twins


_TWINNED_MARKERS = ["PR\u0130VACY POL\u0130CY", "java\u017fcript", "coo\u212aie", "Terms Of Use"]
_MARKED_PIECES = st.sampled_from(
    [*signals._BOILERPLATE_MARKERS, *_TWINNED_MARKERS, "ΟΔΟΣ", "«Wort»", " ", "\n", "Lorem", "IPSUM,", "“the”", "ΣΑ"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_MARKED_PIECES, st.text(max_size=8)), max_size=12).map("".join))
def test_texts_with_markers_and_twins_get_the_plain_values(text: str) -> None:
    assert signals.has_boilerplate(text) == bool(signals._BOILERPLATE.search(text))
    _check_prose(text, "en")
