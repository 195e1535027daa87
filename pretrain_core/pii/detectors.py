r"""Pattern detectors for structured PII: each finds candidates with a regex and keeps those its validator accepts.

Patterns are ASCII (`re.ASCII`): identifiers are written in ASCII digits and letters, and in Chinese or Japanese
text a number directly follows a character that Unicode word classes would count as part of the same word.

Every finder takes the text and yields `Span(start, end, type)`; `find_structured` runs the enabled ones. The
patterns are deliberately anchored on non-word boundaries so a digit run inside a hash, UUID or longer number is
never a candidate, and each validator (checksums, length tables, context words) decides what remains. A pattern
whose boundary is a lookbehind writes its first character before it (`\d(?<![\w.]\d)` for `(?<![\w.])\d`): the
same matches, but the regex engine then skips to the characters a match can start with instead of trying the
lookbehind at every position, which makes these scans two to three times faster
(tests/pii/test_detector_patterns.py checks each against its plain form).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterable, Iterator

from pretrain_core.pii import validators
from pretrain_core.pii.phone import find_phones
from pretrain_core.pii.spans import Span

_EMAIL = re.compile(
    r"(?<![\w.%+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+"
    r"[A-Za-z]{2,24}(?![\w-]|\.\w)",
    re.ASCII,
)
# An address followed by "/24" is a network, and one followed by ".in-addr" a DNS name: neither identifies a host.
_IPV4 = re.compile(r"\d(?<![\w.]\d)\d{0,2}\.(?:\d{1,3}\.){2}\d{1,3}(?!\w|\.\w|/\d)", re.ASCII)
# `(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9A-Fa-f]{1,4}|(?:\d{1,3}\.){3}\d{1,3})?(?![\w:]|\.\d|/\d)`, first
# character first: after a hex digit the first group goes on, after a colon it is complete.
_IPV6 = re.compile(
    r"[0-9A-Fa-f:](?<![\w:.][0-9A-Fa-f:])(?:(?<=:)|(?<=[0-9A-Fa-f])[0-9A-Fa-f]{0,3}:)(?:[0-9A-Fa-f]{0,4}:){1,6}"
    r"(?:[0-9A-Fa-f]{1,4}|(?:\d{1,3}\.){3}\d{1,3})?(?![\w:]|\.\d|/\d)",
    re.ASCII,
)
# Words that make a dotted quad a version, a section number or an object identifier rather than an address.
_NOT_AN_IP_BEFORE = re.compile(
    r"\bversion|\bver\b|\brelease|\bbuild|\bfirmware|\brev\b|\boid\b|\bsection|§|版本|バージョン", re.IGNORECASE
)
_CLAUSE_BREAK = re.compile(r"[。；！？;!?\n（(]")
_SECTION_AROUND = re.compile(r"第\s*[\d.]+\s*[節节章条]")
_CARD = re.compile(r"\d(?<![\w\-.]\d)(?:[ \-]?\d){12,18}(?![\w\-]|[.,]\d)", re.ASCII)
_CARD_WORDS = re.compile(
    r"card|visa|master|amex|american express|credit|debit|payment|karte|zahlung|carte|paiement|卡|支付|付款|カード|"
    r"支払|決済",
    re.IGNORECASE,
)
# Words that make an unbroken digit run an order, invoice or serial number, unless a card word is also there.
_NOT_A_CARD_BEFORE = re.compile(
    r"order|invoice|ticket|serial|tracking|isbn|\bref\b|bestell|rechnung|commande|facture|订单|单号|编号|序列号|注文|"
    r"シリアル|参照番号",
    re.IGNORECASE,
)
_IBAN = re.compile(r"[A-Z](?<![\w][A-Z])[A-Z]\d{2}(?: ?[A-Z0-9]){10,30}", re.ASCII)
_US_SSN = re.compile(r"\d(?<![\w\-]\d)\d{2}([- ])\d{2}\1\d{4}(?![\w\-])", re.ASCII)
_CN_RESIDENT_ID = re.compile(r"[1-8](?<![0-9A-Za-z][1-8])\d{16}[0-9Xx](?![0-9A-Za-z])", re.ASCII)
_FR_NIR = re.compile(r"[1278](?<![\w][1278]) ?\d{2} ?\d{2} ?(?:\d{2}|2[AB]) ?\d{3} ?\d{3} ?\d{2}(?![\w])", re.ASCII)
_UK_NINO = re.compile(r"[A-Z](?<![\w][A-Z])[A-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D](?![\w])", re.ASCII)
_DE_TAX_ID = re.compile(r"\d(?<![\w]\d)\d ?\d{3} ?\d{3} ?\d{3}(?![\w])", re.ASCII)
_DE_TAX_WORDS = re.compile(r"steuer|identifikationsnummer|idnr|tax\s*id|\btin\b", re.IGNORECASE)
# Japanese My Number: twelve digits, unbroken or in fours, named by a word before it (a bare twelve-digit run
# passes its check digit one time in ten).
_JP_MY_NUMBER = re.compile(r"\d(?<![\w\-]\d)\d{3}([ \-]?)\d{4}\1\d{4}(?![\w\-])", re.ASCII)
_JP_MY_NUMBER_WORDS = re.compile(r"マイナンバー|個人番号|my\s*number", re.IGNORECASE)
_SECRET_TOKENS = re.compile(
    r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])"  # AWS access key id
    r"|(?<!\w)gh[pousr]_[A-Za-z0-9]{36}(?!\w)"  # GitHub classic tokens
    r"|(?<!\w)github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}(?!\w)"  # GitHub fine-grained tokens
    r"|(?<!\w)xox[abposr]-(?:[0-9A-Za-z]+-){1,4}[0-9A-Za-z]{6,}"  # Slack tokens
    r"|https://hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{16,}"  # Slack webhooks
    r"|(?<![\w-])AIza[0-9A-Za-z_\-]{35}(?![\w-])"  # Google API keys
    r"|(?<!\w)[sr]k_live_[0-9A-Za-z]{24,99}(?!\w)"  # Stripe live keys
    r"|(?<![\w-])eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{16,}(?![\w-])"  # JSON web tokens
    r"|-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----",
    re.DOTALL | re.ASCII,
)
_SECRET_TOKEN_MARKERS = (
    "AKIA", "ASIA", "ABIA", "ACCA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox", "hooks.slack.com",
    "AIza", "k_live_", "PRIVATE KEY", "eyJ",
)  # fmt: skip
_SECRET_KEY_WORDS = ("key", "secret", "token", "passw", "pwd", "auth", "credential")
_SECRET_KEY_NAME = r"(?:api[_-]?key|apikey|secret|token|passw(?:or)?d|pwd|access[_-]?key|auth|credentials?)[\w.\-]*"
_SECRET_NAME_STARTS = ("api", "secret", "token", "passw", "pwd", "access", "auth", "credential")  # of every name
_SECRET_QUOTED = re.compile(
    _SECRET_KEY_NAME + r"[\"']?\s*(?::=|=>|[:=])\s*[\"']([^\"'\s]{12,200})[\"']", re.IGNORECASE | re.ASCII
)
# Unquoted values (.env files, shell exports) must look like keys throughout: no calls, no attribute access.
_SECRET_BARE = re.compile(
    _SECRET_KEY_NAME + r"\s*[:=]\s*([A-Za-z0-9/+_\-]{16,200}={0,2})(?![\w(.\[/+=\-])", re.IGNORECASE | re.ASCII
)
_DIGIT = re.compile(r"\d", re.ASCII)
_EIGHT_DIGITS = re.compile(r"\d(?:[ \-]?\d){7}", re.ASCII)


def find_emails(text: str) -> Iterator[Span]:
    if "@" not in text:
        return
    for match in _EMAIL.finditer(text):
        local, _, domain = match.group().partition("@")
        if ".." not in local and not local.endswith(".") and ".." not in domain:
            yield Span(match.start(), match.end(), "email")


def find_ips(text: str, keep_private: bool = True) -> Iterator[Span]:
    """IPv4 and IPv6 addresses that `ipaddress` accepts; non-global ones only when `keep_private` is off."""
    for pattern in (_IPV4, _IPV6) if ":" in text else (_IPV4,):
        for match in pattern.finditer(text):
            try:
                address = ipaddress.ip_address(match.group())
            except ValueError:
                continue
            if keep_private and not address.is_global:
                continue
            if address.version == 6 and sum(bool(group) for group in match.group().split(":")) < 3:
                continue  # "::1"-like shorthands and slices such as "x[::2]"
            if address.version == 4 and _looks_like_version(text, match.start(), match.end()):
                continue
            yield Span(match.start(), match.end(), "ip")


def _looks_like_version(text: str, start: int, end: int) -> bool:
    """A version ("v1.2.3.4", "version 1.2.3.4") or a section number ("4.2.13.1. Partitioning" opening a line,
    "第 1.3.2.1 節")."""
    if text[start - 1 : start] in ("v", "V"):
        return True
    clause = _CLAUSE_BREAK.split(text[max(0, start - 20) : start])[-1]  # "版本；…（地址 x": another clause's word
    if _NOT_AN_IP_BEFORE.search(clause):
        return True
    line_start = not text[text.rfind("\n", 0, start) + 1 : start].strip()
    return (line_start and text[end : end + 1] in (".", ")")) or bool(
        _SECTION_AROUND.search(text, max(0, start - 2), end + 2)
    )


def find_cards(text: str) -> Iterator[Span]:
    """Card numbers: a known network, Luhn, and grouping as cards are printed. An unbroken digit run is taken
    only at the common lengths (15, 16) or after a card word: long integers in data pass Luhn one time in ten."""
    for match in _CARD.finditer(text):
        number = match.group()
        if not (_card_grouping(number) and validators.card_valid(number)):
            continue
        if number.isdigit() and not _unbroken_card_context(text, match.start(), len(number)):
            continue
        yield Span(match.start(), match.end(), "card")


def _unbroken_card_context(text: str, start: int, length: int) -> bool:
    """An unbroken run is a card at the common lengths (15, 16) unless an order or serial word names it, and at
    any length after a card word."""
    if _CARD_WORDS.search(text, max(0, start - 40), start):
        return True
    return length in (15, 16) and not _NOT_A_CARD_BEFORE.search(text, max(0, start - 30), start)


def _card_grouping(text: str) -> bool:
    """Cards are printed unbroken, in fours (Visa, Mastercard, ...) or 4-6-5 / 4-6-4 (Amex, Diners)."""
    groups = re.split(r"[ \-]", text)
    if len(groups) == 1:
        return True
    if len({sep for sep in text if not sep.isdigit()}) != 1:
        return False
    lengths = [len(g) for g in groups]
    return (all(n == 4 for n in lengths[:-1]) and 1 <= lengths[-1] <= 4) or lengths in ([4, 6, 5], [4, 6, 4])


def find_ibans(text: str) -> Iterator[Span]:
    """IBANs, printed compact or in groups of four; the match is cut at the length its country prescribes."""
    for match in _IBAN.finditer(text):
        expected = validators.IBAN_LENGTHS.get(match.group()[:2])
        if expected is None:
            continue
        end, count = match.start(), 0
        while count < expected and end < match.end():
            count += text[end] != " "
            end += 1
        # ASCII letters and digits only: Chinese or Japanese text may follow an IBAN without a space.
        after = text[end : end + 1]
        if (
            count == expected
            and not (after.isascii() and after.isalnum())
            and validators.iban_valid(text[match.start() : end])
        ):
            yield Span(match.start(), end, "iban")


def find_national_ids(text: str) -> Iterator[Span]:
    """US SSN, PRC resident id, French NIR, UK NINO, and German tax ids and Japanese My Numbers where a word before
    them names them."""
    for match in _UK_NINO.finditer(text):
        if validators.uk_nino_valid(match.group()):
            yield Span(match.start(), match.end(), "national_id")
    # Every other id has eight digits in a row or more (a Corsican NIR "2A 818 573 25" has eight after its
    # department): one scan rules most texts out.
    if not _EIGHT_DIGITS.search(text):
        return
    checks: tuple[tuple[re.Pattern[str], Callable[[str], bool]], ...] = (
        (_US_SSN, validators.us_ssn_valid),
        (_CN_RESIDENT_ID, validators.cn_resident_id_valid),
        (_FR_NIR, validators.fr_nir_valid),
    )
    for pattern, valid in checks:
        for match in pattern.finditer(text):
            if valid(match.group()):
                yield Span(match.start(), match.end(), "national_id")
    named_checks: tuple[tuple[re.Pattern[str], re.Pattern[str], Callable[[str], bool]], ...] = (
        (_DE_TAX_ID, _DE_TAX_WORDS, validators.de_tax_id_valid),
        (_JP_MY_NUMBER, _JP_MY_NUMBER_WORDS, validators.jp_my_number_valid),
    )
    for pattern, words, valid in named_checks:
        # The naming word is looked for only before a match: a case-insensitive search of the whole text costs more.
        for match in pattern.finditer(text):
            if words.search(text, max(0, match.start() - 40), match.start()) and valid(match.group()):
                yield Span(match.start(), match.end(), "national_id")


def find_secrets(text: str) -> Iterator[Span]:
    """Known token formats and private key blocks whole; for `key = "value"` assignments only a random value.

    Each regex runs only when a literal it needs occurs in the text (a fast substring test), since prose and
    most code contain no secret at all and these patterns are the most expensive to scan with.
    """
    if any(marker in text for marker in _SECRET_TOKEN_MARKERS):
        for match in _SECRET_TOKENS.finditer(text):
            yield Span(match.start(), match.end(), "secret")
    lowered = text.lower()
    if not any(word in lowered for word in _SECRET_KEY_WORDS):
        return
    for match in _key_value_matches(_SECRET_QUOTED, text, lowered):
        if validators.looks_random(match.group(1)):
            yield Span(match.start(1), match.end(1), "secret")
    for match in _key_value_matches(_SECRET_BARE, text, lowered):
        if validators.looks_random(match.group(1), min_classes=3):
            yield Span(match.start(1), match.end(1), "secret")


def _key_value_matches(pattern: re.Pattern[str], text: str, lowered: str) -> Iterator[re.Match[str]]:
    """`pattern.finditer(text)` for a pattern that starts with `_SECRET_KEY_NAME`, tried only where one of the
    words such a name starts with occurs in `lowered` (the text lower-cased: the same positions, unless the text
    holds "İ", which lower-cases to two characters; then the whole text is scanned). Scanned over every position of
    prose, the case-insensitive alternation made this the costliest detector."""
    if "\u0130" in text:
        yield from pattern.finditer(text)
        return
    starts = sorted({at for word in _SECRET_NAME_STARTS for at in _occurrences(lowered, word)})
    end = 0
    for start in starts:
        if start < end:
            continue
        match = pattern.match(text, start)
        if match:
            end = match.end()
            yield match


def _occurrences(text: str, word: str) -> Iterator[int]:
    at = text.find(word)
    while at >= 0:
        yield at
        at = text.find(word, at + 1)


def find_structured(text: str, types: Iterable[str], keep_private_ips: bool = True) -> list[Span]:
    """All pattern matches of the given kinds, overlaps not yet resolved."""
    wanted = set(types)
    has_digit = _DIGIT.search(text) is not None
    spans: list[Span] = []
    if "email" in wanted:
        spans.extend(find_emails(text))
    if "secret" in wanted:
        spans.extend(find_secrets(text))
    if "iban" in wanted and has_digit:
        spans.extend(find_ibans(text))
    if "national_id" in wanted and has_digit:
        spans.extend(find_national_ids(text))
    if "ip" in wanted and has_digit:
        spans.extend(find_ips(text, keep_private_ips))
    if "card" in wanted and has_digit:
        spans.extend(find_cards(text))
    if "phone" in wanted and has_digit:
        spans.extend(find_phones(text))
    return spans
