"""Checksums and format rules on published example identifiers, and the digit changes they must catch."""

from __future__ import annotations

import pytest

from pretrain_core.pii import validators


@pytest.mark.parametrize(
    "number",
    ["4111 1111 1111 1111", "5555-5555-5555-4444", "3782 822463 10005", "3530111333300000", "6212 3456 7890 1232"],
)
def test_published_test_card_numbers_pass(number: str) -> None:
    assert validators.card_valid(number)


@pytest.mark.parametrize(
    "number",
    [
        "4111 1111 1111 1112",  # Luhn fails
        "1234 5678 9012 3452",  # Luhn holds, but no card network starts with 1
        "0000 0000 0000 0000",  # one repeated digit
        "4111 1111 1111",  # too short
    ],
)
def test_near_misses_are_not_cards(number: str) -> None:
    assert not validators.card_valid(number)


@pytest.mark.parametrize(
    "iban",
    [
        "DE89 3704 0044 0532 0130 00",
        "GB82 WEST 1234 5698 7654 32",
        "FR14 2004 1010 0505 0001 3M02 606",
        "NL91ABNA0417164300",
    ],
)
def test_registry_example_ibans_pass(iban: str) -> None:
    assert validators.iban_valid(iban)


@pytest.mark.parametrize(
    "iban",
    [
        "DE89 3704 0044 0532 0130 01",
        "DE89 3704 0044 0532 0130 0",
        "XX89 3704 0044 0532 0130 00",
        "GB82 WEST 1234 5698 7654",
    ],
)
def test_iban_with_wrong_check_length_or_country_fails(iban: str) -> None:
    assert not validators.iban_valid(iban)


def test_cn_resident_id_checks_date_and_check_character() -> None:
    assert validators.cn_resident_id_valid("11010519491231002X")
    assert not validators.cn_resident_id_valid("110105194912310021")  # wrong check character
    assert not validators.cn_resident_id_valid("11010519491331002X")  # month 13


def test_de_tax_id_checks_digit_repetition_and_mod_11_10() -> None:
    assert validators.de_tax_id_valid("86095742719")
    assert validators.de_tax_id_valid("65929970489")
    assert not validators.de_tax_id_valid("86095742718")  # check digit
    assert not validators.de_tax_id_valid("12345678901")  # no repeated digit among the first ten


def test_fr_nir_key_and_corsican_departments() -> None:
    assert validators.fr_nir_valid("2 55 08 14 168 025 38")
    assert not validators.fr_nir_valid("2 55 08 14 168 025 39")
    body = "1840319168025"  # born in Corsica: department 2A counts as 19 in the key computation
    corsican = f"1 84 03 2A 168 025 {97 - int(body) % 97:02d}"
    assert validators.fr_nir_valid(corsican)


def test_us_ssn_and_uk_nino_format_rules() -> None:
    assert validators.us_ssn_valid("536-22-1234")
    assert not validators.us_ssn_valid("666-22-1234")
    assert not validators.us_ssn_valid("912-22-1234")
    assert not validators.us_ssn_valid("536-00-1234")
    assert validators.uk_nino_valid("AB 12 34 56 C")
    assert not validators.uk_nino_valid("QQ 12 34 56 C")  # Q never starts a NINO
    assert not validators.uk_nino_valid("GB 12 34 56 C")  # reserved prefix


def test_looks_random_separates_keys_from_words_and_placeholders() -> None:
    assert validators.looks_random("Zx8kP2mQ9vR4tL7wN3bY")
    assert not validators.looks_random("correcthorsebattery")  # one character class
    assert not validators.looks_random("your-api-key-here-123")
    assert validators.shannon_entropy("aaaa") == 0.0


def test_jp_my_number_check_digit() -> None:
    assert validators.jp_my_number_valid("4944 7578 0143") and validators.jp_my_number_valid("504123960155")
    assert not validators.jp_my_number_valid("504123960156") and not validators.jp_my_number_valid("50412396015")
