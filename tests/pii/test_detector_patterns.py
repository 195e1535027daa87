"""The detectors' patterns and the name finder's capitalised words are written first character first (see
pretrain_core/pii/detectors.py), and secret assignments are tried only where a key name can start: each must find
exactly what its plain form finds, on random text over the characters the patterns care about and on every labelled
PII item."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pretrain_core.pii import detectors, latin_names, phone

LABELLED = Path(__file__).resolve().parents[2] / "data" / "labelled" / "pii"
PLAIN = {
    "_IPV4": r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?!\w|\.\w|/\d)",
    "_IPV6": r"(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9A-Fa-f]{1,4}|(?:\d{1,3}\.){3}\d{1,3})?(?![\w:]|\.\d|/\d)",
    "_CARD": r"(?<![\w\-.])\d(?:[ \-]?\d){12,18}(?![\w\-]|[.,]\d)",
    "_IBAN": r"(?<![\w])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){10,30}",
    "_US_SSN": r"(?<![\w\-])\d{3}([- ])\d{2}\1\d{4}(?![\w\-])",
    "_CN_RESIDENT_ID": r"(?<![0-9A-Za-z])[1-8]\d{16}[0-9Xx](?![0-9A-Za-z])",
    "_FR_NIR": r"(?<![\w])[1278] ?\d{2} ?\d{2} ?(?:\d{2}|2[AB]) ?\d{3} ?\d{3} ?\d{2}(?![\w])",
    "_UK_NINO": r"(?<![\w])[A-Z]{2} ?\d{2} ?\d{2} ?\d{2} ?[A-D](?![\w])",
    "_DE_TAX_ID": r"(?<![\w])\d{2} ?\d{3} ?\d{3} ?\d{3}(?![\w])",
    "_JP_MY_NUMBER": r"(?<![\w\-])\d{4}([ \-]?)\d{4}\1\d{4}(?![\w\-])",
}
PLAIN_PHONE = r"(?<![\w+.\-/:])(?:\+|\(\+?)?\d[\d ().\-/\u00a0]{5,24}\d" + phone._EXTENSION + r"(?![\w\-]|[.,/]\d)"
PLAIN_CAPITALISED_WORD = r"(?<![\w@./-])[A-Z][^\W\d_]+(?![\w@/-])"
PATTERNS = [(getattr(detectors, name), plain) for name, plain in PLAIN.items()]
PATTERNS += [(phone._CANDIDATE, PLAIN_PHONE), (latin_names._CAPITALISED_WORD, PLAIN_CAPITALISED_WORD)]

# Digits, separators, hex and ID letters, the characters the lookbehinds test, and key names and values.
_CHARACTERS = list("0123456789 -.:/+()xX_aAbBcCdDeEfFzZ\n\u00a0\u0130@é")
_WORDS = ["::", "ext. ", "AB", "2A", '"', "'", "=", ": ", "1.", "23.", "255.", "ab:", "1234 ", "Élise", "Jo"]
_KEY_NAMES = ["api_key", "APIKEY", "Secret", "token", "PassWord", "passwd", "pwd", "access-key", "Auth", "credentials"]
_VALUES = ["Zx8kP2mQ9vR4tL7wN3bY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Rt2Lm9", "k"]
_PIECES = st.sampled_from([*_CHARACTERS, *_WORDS, *_KEY_NAMES, *_VALUES])
_TEXTS = st.lists(_PIECES, max_size=40).map("".join)


def _spans(pattern: re.Pattern[str], text: str) -> list[tuple[int, int, tuple[str | None, ...]]]:
    return [(m.start(), m.end(), m.groups()) for m in pattern.finditer(text)]


def _check(text: str) -> None:
    for fast, plain in PATTERNS:
        assert _spans(fast, text) == _spans(re.compile(plain, fast.flags), text), (plain, text)
    lowered = text.lower()
    for pattern in (detectors._SECRET_QUOTED, detectors._SECRET_BARE):
        tried = [(m.start(), m.end()) for m in detectors._key_value_matches(pattern, text, lowered)]
        assert tried == [(m.start(), m.end()) for m in pattern.finditer(text)], text


@settings(max_examples=1500, deadline=None)
@given(_TEXTS)
def test_random_text_gets_the_plain_patterns_matches(text: str) -> None:
    _check(text)


@pytest.mark.parametrize("name", sorted(p.name for p in LABELLED.glob("*.jsonl.gz")))
def test_every_labelled_item_gets_the_plain_patterns_matches(name: str) -> None:
    with gzip.open(LABELLED / name, "rt", encoding="utf-8") as handle:
        texts = [json.loads(line)["text"] for line in handle]
    assert texts
    for text in texts:
        _check(text)
