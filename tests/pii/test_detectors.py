"""Structured detectors on realistic sentences in five languages, decoys that must stay untouched, and real files."""

from __future__ import annotations

import sysconfig
from pathlib import Path

import pytest

from pretrain_core.pii.config import PII_TYPES
from pretrain_core.pii.detectors import find_ips, find_structured
from tests.shipped_text import LICENCES

STRUCTURED = [t for t in PII_TYPES if t not in ("person", "address")]
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIzNzE3MDIzNTMiLCJpYXQiOjE3MzUwNDYwNDZ9."
    "6gPQ5NaQScOqLq7P9EIR9SdFDKIuhsizFBKGN6G9lAE"
)
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\n"
    "KUpRKfFLfRYC9AIKjbJTWit+CqvjWYzvQwECAwEAAQJAIJLixBy2qpFoS4DSmoEm\n-----END RSA PRIVATE KEY-----"
)


def found(text: str, keep_private_ips: bool = True) -> list[tuple[str, str]]:
    return sorted((s.type, text[s.start : s.end]) for s in find_structured(text, STRUCTURED, keep_private_ips))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Write to jane.doe+news@example.co.uk for a copy.", ("email", "jane.doe+news@example.co.uk")),
        ("Bei Fragen schreiben Sie an info@beispiel-firma.de.", ("email", "info@beispiel-firma.de")),
        ("如有疑问，请发邮件至zhang.wei@example.cn。", ("email", "zhang.wei@example.cn")),
        ("The attacker connected from 203.0.114.7 twice.", ("ip", "203.0.114.7")),
        ("Der Server ist unter 2a00:1450:4001:82a::200e erreichbar.", ("ip", "2a00:1450:4001:82a::200e")),
        ("Please charge my Visa 4111 1111 1111 1111 instead.", ("card", "4111 1111 1111 1111")),
        ("Ma carte : 5555-5555-5555-4444, expiration 12/27.", ("card", "5555-5555-5555-4444")),
        ("Bitte überweisen Sie auf DE89 3704 0044 0532 0130 00 bis Freitag.", ("iban", "DE89 3704 0044 0532 0130 00")),
        ("Virement sur le compte FR14 2004 1010 0505 0001 3M02 606.", ("iban", "FR14 2004 1010 0505 0001 3M02 606")),
        ("His SSN is 536-22-1234, please keep it private.", ("national_id", "536-22-1234")),
        ("申请人身份证号码：11010519491231002X。", ("national_id", "11010519491231002X")),
        ("Numéro de sécurité sociale : 2 55 08 14 168 025 38.", ("national_id", "2 55 08 14 168 025 38")),
        ("Her National Insurance number is AB 12 34 56 C.", ("national_id", "AB 12 34 56 C")),
        ("Ihre Steuer-ID lautet 86095742719.", ("national_id", "86095742719")),
        ("aws_access_key_id = AKIAIOSFODNN7EXAMPLE", ("secret", "AKIAIOSFODNN7EXAMPLE")),
        ('token: "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"', ("secret", "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789")),
        (
            "SLACK=xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
            ("secret", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"),
        ),
        ('API_KEY = "Zx8kP2mQ9vR4tL7wN3bY"', ("secret", "Zx8kP2mQ9vR4tL7wN3bY")),
        (
            "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Rt2Lm9",
            ("secret", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Rt2Lm9"),
        ),
        (f"key.pem:\n{PEM}\n", ("secret", PEM)),
        (f"Authorization: Bearer {JWT}", ("secret", JWT)),
        ("マイナンバー：4944 7578 0143", ("national_id", "4944 7578 0143")),
        ("個人番号は504123960155です。", ("national_id", "504123960155")),
        ("Numéro : 1 69 11 2A 818 573 25", ("national_id", "1 69 11 2A 818 573 25")),  # Corsica: eight digits run
        ("寄付は口座DE89370400440532013000へお願いします。", ("iban", "DE89370400440532013000")),
        ("Der Spiegelserver 38.127.44.131 war nicht erreichbar.", ("ip", "38.127.44.131")),  # "server", no "ver"
        ("这是开发中的版本；它会持续更新。（客户端地址 194.216.224.176）", ("ip", "194.216.224.176")),
        ("Moyen de paiement : 38144437398268", ("card", "38144437398268")),  # 14 digits after a payment word
    ],
)
def test_structured_pii_is_found(text: str, expected: tuple[str, str]) -> None:
    assert expected in found(text)


@pytest.mark.parametrize(
    "text",
    [
        "ISBN 978-3-16-148410-0 and ISBN 0-306-40615-2 are both cited.",
        "Released on 2024-03-15, updated 15.03.2024 at 12:30:45.",
        "Upgrade to version 1.2.3.4 before the v2.0.0.1 release; see section 8.2.4.44.",
        "Request id 123e4567-e89b-12d3-a456-426614174000 failed.",
        "Fixed in commit 9fceb02d0ae598e95dc970b74767f19372d61af8 (short: 9fceb02).",
        "Use #ff5733 for the border and #FFFFFF for the background.",
        "The sequence 4111 1111 1111 1112 fails the Luhn check.",
        "Order number 4820 1934 5521 0876 ships Monday.",
        "Serial 573763426263223372 and hash -8204893 from the table.",
        "MAC address 00:1A:2B:3C:4D:5E, slice x[::2], C++ std::vector<int>.",
        'password = "correct horse battery staple"',
        'api_key = os.environ["API_KEY"]',
        "auth = HTTPBasicAuth(user, password_from_vault)",
        "The network 203.0.113.0/24 and the reverse zone 1.0.0.127.in-addr.arpa.",
        "Partitioning\n\n4.2.13.1. Guided partitioning\n\nThe installer proposes a layout.",
        "バグの報告については第 1.3.2.1 節を参照してください。",
        "ご注文番号 4682708343020124 を発送しました。",  # Luhn-valid by chance, but an order number
        "Die Bestellnummer 504123960155 ist bezahlt.",  # a valid My Number check digit, but no My Number word
    ],
)
def test_decoys_are_not_flagged(text: str) -> None:
    assert found(text) == []


def test_private_addresses_are_kept_unless_configured() -> None:
    text = "The router at 192.168.1.1 forwards to 10.0.0.5 and ::1; the public side is 8.8.8.8."
    assert [text[s.start : s.end] for s in find_ips(text, keep_private=True)] == ["8.8.8.8"]
    assert [text[s.start : s.end] for s in find_ips(text, keep_private=False)] == ["192.168.1.1", "10.0.0.5", "8.8.8.8"]


def test_german_tax_id_needs_its_name_nearby() -> None:
    assert found("Die Rechnung 86095742719 ist bezahlt.") == []


def test_real_licences_have_no_structured_pii_but_emails_and_addresses_of_publishers() -> None:
    texts = [p.read_text(encoding="utf-8") for p in sorted(LICENCES.iterdir()) if p.is_file()]
    kinds = {kind for text in texts for kind, _ in found(text)}
    assert kinds <= {"email"}


def test_stdlib_sources_yield_no_cards_ibans_ids_or_phones() -> None:
    """Python's own date, decimal, uuid and hashing code is full of digit runs, versions and hex."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    names = ["datetime.py", "_pydecimal.py", "uuid.py", "hashlib.py", "ipaddress.py", "tarfile.py", "locale.py"]
    texts = [(stdlib / name).read_text(encoding="utf-8") for name in names]
    kinds = [kind for text in texts for kind, _ in found(text)]
    assert not {"card", "iban", "national_id", "phone", "secret"} & set(kinds)
