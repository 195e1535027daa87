"""Phone numbers: a loose pattern for digit runs with separators (and an extension), then format rules.

Most digit runs in text are not phones (dates, versions, order and ISBN numbers, amounts), so a candidate is a
phone only when its digit grouping matches how a country writes numbers (US 3-3-4, FR pairs, JP hyphen groups,
...) or it carries an international prefix with a plausible length for its country code, or a phone word ("Tel.",
"电话", "電話") right before it vouches for a bare digit run. A word like "order" or "ISBN" before it vetoes.
Candidates these rules do not know are given to libphonenumber (the `phonenumbers` package), which knows every
country's numbering plan: one written in groups (or after a phone word) that it finds valid in one of
`PHONE_REGIONS` is a phone.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

import phonenumbers

from pretrain_core.pii.spans import Span

_EXTENSION_BODY = r"\s?(?:x|ext\.?|extension|доб\.?|内線)\s?\d{1,6}"  # "x150", "ext. 12", "доб. 3"
_EXTENSION = f"(?:{_EXTENSION_BODY})?"
# A candidate is `(?<![\w+.\-/:])(?:\+|\(\+?)?\d[\d ().\-/\u00a0]{5,24}\d<extension>` written first character first
# (see detectors.py: the engine then skips to where a candidate can start), twice as fast on prose.
_CANDIDATE = re.compile(
    r"[+(\d](?<![\w+.\-/:][+(\d])(?:(?<=\d)|(?:(?<=\+)|(?<=\()\+?)\d)[\d ().\-/\u00a0]{5,24}\d"
    + _EXTENSION
    + r"(?![\w\-]|[.,/]\d)",
    re.ASCII,
)
_EXTENSION_TAIL = re.compile(_EXTENSION_BODY + "$", re.ASCII)
# Where the documents we clean are written (the languages we detect, and their neighbours): libphonenumber
# validates a national number against each in turn.
PHONE_REGIONS = ("US", "GB", "DE", "FR", "ES", "JP", "CN", "RU", "CA", "AT", "CH", "BE", "IT", "NL", "PL", "BR", "PT")
_TRUNK_ZERO = re.compile(r"\s?\(0\)\s?")  # "+44 (0)20 ...": the national trunk prefix written inside
_GROUPS = re.compile(r"\d+", re.ASCII)
_DECIMAL = re.compile(r"[+(]*\d+\.\d+")
_IP_LIKE = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")

_PHONE_WORDS = re.compile(
    r"\b(?:phone|telephone|tel|call|mobile|cell|fax|whatsapp|contact|hotline|dial|ring|reach|text me|telefon|"
    r"handy|anruf|anrufen|ruf|erreichen|erreichbar|téléphone|portable|appel|appelez|appeler|joindre|tél)\b|"
    r"电话|電話|手机|联系|致电|拨打|热线|携帯|連絡|☎|📞",
    re.IGNORECASE,
)
_VETO_WORDS = re.compile(
    r"isbn|issn|order|invoice|ticket|serial|version|patent|doi|arxiv|account|ref\b|ref\.|no\.|nr\.|№|bestell|"
    r"rechnung|commande|facture|订单|编号|单号|注文",
    re.IGNORECASE,
)
_CONTEXT_CHARS = 30
_COUNTING = "0123456789" * 2
_VETO_CHARS = 20  # a veto word further away belongs to another clause

# Country code -> allowed lengths of the national significant number (ITU-T E.164 national plans).
_NSN_LENGTHS: dict[str, tuple[int, ...]] = {
    "1": (10,),
    "33": (9,),
    "44": (9, 10),
    "49": (7, 8, 9, 10, 11, 12),
    "81": (9, 10),
    "86": (10, 11),
}
_JP_SHAPES = {(2, 4, 4), (3, 3, 4), (4, 2, 4), (5, 1, 4), (3, 4, 4), (4, 3, 3)}
_UK_SHAPES = {(3, 4, 4), (4, 3, 4), (5, 6), (4, 6), (5, 3, 3)}


def find_phones(text: str) -> Iterator[Span]:
    for match in _CANDIDATE.finditer(text):
        start, candidate = match.start(), match.group()
        if candidate.startswith("(") and ")" not in candidate:  # "(01 23 45 67 89)": the bracket encloses it
            start, candidate = start + 1, candidate[1:]
        before = text[max(0, start - _CONTEXT_CHARS) : start]
        if is_phone(candidate, before):
            yield Span(start, match.end(), "phone")


def is_phone(candidate: str, before: str = "") -> bool:
    """Whether `candidate` is a phone number, given up to 30 characters of text before it."""
    vouched = bool(_PHONE_WORDS.search(before))
    vetoed = _VETO_WORDS.search(before[-_VETO_CHARS:]) or before.rstrip().endswith("#")
    if not vouched and vetoed:
        return False
    number = _EXTENSION_TAIL.sub("", candidate)
    digits = "".join(_GROUPS.findall(_TRUNK_ZERO.sub(" ", number)))
    if not 7 <= len(digits) <= 15 or len(set(digits)) < 3 or _DECIMAL.fullmatch(number):
        return False
    if _known_format(number, vouched):
        return True
    # Beyond the known formats, a number libphonenumber finds valid needs one more sign of being a phone: an
    # extension, a phone word, an international prefix, or separators other than spaces (a list of numbers has
    # spaces).
    # A bare grouped run needs ten digits (a national number with its area code): nine-digit codes such as ZIP+4
    # "02110-1301" are valid numbers somewhere. Dotted quads are addresses of another kind, and a last group of
    # one digit is a check digit (ISBN "0-2330-6005-7"), which no numbering plan writes apart.
    signed = number != candidate or vouched or number.lstrip("(").startswith(("+", "00"))
    if _IP_LIKE.fullmatch(number) or len(_GROUPS.findall(number)[-1]) < 2:
        return False
    if not (signed or (len(digits) >= 10 and not _separators_are_spaces(number))):
        return False
    return _valid_somewhere(number)


@functools.lru_cache(maxsize=65_536)
def _valid_somewhere(candidate: str) -> bool:
    """libphonenumber's verdict: the whole candidate is a valid number of one of `PHONE_REGIONS` (any region
    when it starts with + or 00) whose digits are grouped the way that country writes them (its strict grouping:
    a date or a ZIP+4 code has the right number of digits, not the right groups). Cached: corpora repeat their
    digit runs (footers, boilerplate)."""
    text = "+" + candidate[2:] if candidate.startswith("00") else candidate
    international = text.lstrip("(").startswith("+")
    for region in PHONE_REGIONS:
        try:
            valid = phonenumbers.is_valid_number(phonenumbers.parse(text, region))  # cheap: parse, then the plan
        except phonenumbers.NumberParseException:
            return False
        if valid:
            matches = phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.STRICT_GROUPING)
            if any(match.start == 0 and match.end == len(text) for match in matches):
                return True
        if international:
            return False  # the country code is in the number: other regions would not change the verdict
    return False


def _known_format(candidate: str, vouched: bool) -> bool:
    """The hand-written rules for the formats of the countries we know best (fast and strict)."""
    international = candidate.lstrip("(").startswith("+") or candidate.startswith("00")
    groups = tuple(_GROUPS.findall(_TRUNK_ZERO.sub(" ", candidate)))
    digits = "".join(groups)
    if international:
        national = digits[2:] if candidate.startswith("00") else digits
        return _international_valid(national, grouped=len(groups) > 1 and "." not in candidate, vouched=vouched)
    if len(groups) > 1 and _national_format(groups, candidate):
        return True
    if len(groups) == 1 and _phone_by_shape(digits):
        return True
    # A phone word vouches for an unseparated or space-separated run, never for one grouped like a date.
    return vouched and _separators_are_spaces(candidate) and _bare_national(digits)


def _international_valid(digits: str, grouped: bool, vouched: bool) -> bool:
    """E.164: country code plus a national number of the length that country uses. A code not in the table is
    accepted by total length only when the number is written in groups or a phone word vouches for it."""
    if digits.startswith("0"):
        return False  # no country code starts with 0
    for cc_length in (1, 2, 3):
        lengths = _NSN_LENGTHS.get(digits[:cc_length])
        if lengths is not None:
            national = digits[cc_length:]
            if digits[:cc_length] == "1" and not _nanp_valid(national):
                return False
            return len(national) in lengths and national[0] != "0"
    return (grouped or vouched) and 8 <= len(digits) <= 15


def _national_format(groups: tuple[str, ...], candidate: str) -> bool:
    """The digit grouping and separators of a domestic number in the US, France, UK, Germany, Japan or China.

    Separators matter: space-separated "571 612 1056" is as often a list of numbers as a US phone, and dotted
    "016.016.016.016" is no German number, so those need a phone word before them (see `_bare_national`).
    """
    lengths = tuple(len(g) for g in groups)
    digits = "".join(groups)
    separators = set(_GROUPS.sub("", candidate).replace(" ", "_")) or {"_"}  # "_": a space
    if lengths == (3, 3, 4) and _nanp_valid(digits) and separators - {"_"}:
        return True  # US/CA: (555) 234-5678, 555.234.5678, 555-234-5678
    if lengths == (1, 3, 3, 4) and digits[0] == "1" and _nanp_valid(digits[1:]) and separators - {"_"}:
        return True  # US with trunk 1: 1-555-234-5678
    if len(digits) == 11 and digits[0] == "1" and digits[1] in "3456789" and lengths == (3, 4, 4):
        return separators <= {"_", "-"}  # CN mobile: 138 0013 8000
    if not digits.startswith("0") or digits.startswith("00"):
        return False
    if lengths == (2, 2, 2, 2, 2):
        return separators <= {"_", ".", "-"}  # FR: 01 23 45 67 89, 01.23.45.67.89
    if separators == {"-"} and len(digits) in (10, 11) and lengths in _JP_SHAPES:
        return True  # JP: 03-1234-5678, 090-1234-5678
    if len(digits) == 11 and lengths in _UK_SHAPES and separators <= {"_", "-"}:
        return True  # UK: 020 7946 0958, 07700 900123
    # DE and CN landlines: area code with trunk 0, then the subscriber number. Ten digits at least, so a US ZIP+4
    # code ("02110-1301") is not one.
    plausible = 3 <= lengths[0] <= 5 and 10 <= len(digits) <= 12 and len(groups) <= 4 and min(lengths[1:]) >= 3
    return plausible and separators <= {"_", "/", "-", "(", ")"}


def _phone_by_shape(digits: str) -> bool:
    """Unbroken runs that are phone numbers by their shape alone, as commonly written in their countries: a
    Chinese mobile (1, then 3-9, then nine digits) and a ten-digit national number with trunk 0 (France, Japan's
    mobiles and Tokyo and Osaka lines, many German ones). Other ten- and eleven-digit runs need a phone word, and
    counting sequences ("0123456789", a digit alphabet in code) are none."""
    if digits in _COUNTING or digits in _COUNTING[::-1]:
        return False
    if len(digits) == 11 and digits[0] == "1" and digits[1] in "3456789":
        return True
    return len(digits) == 10 and digits[0] == "0" and digits[1] != "0"


def _separators_are_spaces(candidate: str) -> bool:
    return not _GROUPS.sub("", candidate).strip()


def _bare_national(digits: str) -> bool:
    """An unseparated run next to a phone word: a trunk-0 national number, a CN mobile or a NANP number."""
    if digits.startswith("0") and not digits.startswith("00"):
        return 9 <= len(digits) <= 12
    if len(digits) == 11 and digits[0] == "1" and digits[1] in "3456789":
        return True
    return len(digits) == 10 and _nanp_valid(digits)


def _nanp_valid(national: str) -> bool:
    """North American numbering plan: area code and exchange start 2-9, and the area code is not an N11 code."""
    return len(national) == 10 and national[0] in "23456789" and national[1:3] != "11" and national[3] in "23456789"
