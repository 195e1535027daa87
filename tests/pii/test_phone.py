"""Phone numbers in the formats people write them, and the digit runs that only look like phones."""

from __future__ import annotations

import pytest

from pretrain_core.pii.phone import find_phones


def phones(text: str) -> list[str]:
    return [text[s.start : s.end] for s in find_phones(text)]


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("Call our front desk at (415) 555-2671 before noon.", "(415) 555-2671"),
        ("International callers dial +1 415 555 2671.", "+1 415 555 2671"),
        ("Sie erreichen mich unter 030 12345678 oder mobil unter 0171 1234567.", "030 12345678"),
        ("Rufen Sie die Zentrale an: +49 30 901820.", "+49 30 901820"),
        ("Pour toute question, appelez le 01 42 68 53 00.", "01 42 68 53 00"),
        ("Depuis l'étranger : +33 1 42 68 53 00.", "+33 1 42 68 53 00"),
        ("Our London office is on 020 7946 0958.", "020 7946 0958"),
        ("From abroad dial +44 (0)20 7946 0958.", "+44 (0)20 7946 0958"),
        ("请拨打客服电话 138 0013 8000 咨询。", "138 0013 8000"),
        ("国际用户请拨打 +86 138 0013 8000。", "+86 138 0013 8000"),
        ("お問い合わせは 03-1234-5678 までお電話ください。", "03-1234-5678"),
        ("携帯：090-1234-5678", "090-1234-5678"),
        ("电话：13800138000", "13800138000"),
        ("有问题可以打13800138000咨询。", "13800138000"),  # a Chinese mobile needs no phone word
        ("Pour toute réclamation : 0780058873 (du lundi au vendredi).", "0780058873"),
        ("Notre assistance (07.72.18.85.01) répond 24 h/24.", "07.72.18.85.01"),
        ("Notre assistance (0033 1 33 48 80 27) répond 24 h/24.", "0033 1 33 48 80 27"),
        ("代表番号 03-1234-5678", "03-1234-5678"),  # 番号 is "number", not an order number
        # Formats outside the hand-written rules, which libphonenumber knows:
        ("Reach the desk at 206.269.0743x9150 any weekday.", "206.269.0743x9150"),
        ("From overseas dial 001-415-555-2671 and ask for sales.", "001-415-555-2671"),
        ("Die Zentrale erreichen Sie unter +49 (0)30 901820.", "+49 (0)30 901820"),
        ("Büro Wien: 01 58839 0, Fax 01 58839 10.", "01 58839 10"),
        ("Записаться можно по номеру 8 (495) 123-45-67.", "8 (495) 123-45-67"),
        ("Ligue para (11) 3456-7890 em horário comercial.", "(11) 3456-7890"),
        ("Lo sportello, tel. 06 6982 0000, risponde.", "06 6982 0000"),  # spaces alone need a phone word
    ],
)
def test_phone_formats_are_found(text: str, number: str) -> None:
    assert number in phones(text)


def test_faker_numbers_libphonenumber_calls_valid_are_found_in_every_locale() -> None:
    """Another generator's formats (Faker's, which these rules were not written from), judged by whether
    libphonenumber finds the number valid in its country: found in context with a phone word, and mostly without."""
    faker = pytest.importorskip("faker")
    import phonenumbers

    regions = {"en_US": "US", "en_GB": "GB", "de_DE": "DE", "de_AT": "AT", "fr_FR": "FR", "ja_JP": "JP"}
    regions |= {"zh_CN": "CN", "es_ES": "ES", "ru_RU": "RU", "pt_BR": "BR", "it_IT": "IT", "pl_PL": "PL"}
    worded = bare = total = 0
    for locale, region in regions.items():
        fake = faker.Faker(locale)
        fake.seed_instance(7)
        for _ in range(60):
            number = fake.phone_number()
            try:
                if not phonenumbers.is_valid_number(phonenumbers.parse(number, region)):
                    continue
            except phonenumbers.NumberParseException:
                continue
            total += 1
            worded += number in phones(f"Contact: {number} for details.")
            bare += number in phones(f"See the office, {number}, near the station.")
    assert total > 400
    assert worded / total > 0.98 and bare / total > 0.8, (worded / total, bare / total)


def test_both_german_numbers_in_one_sentence() -> None:
    assert phones("Sie erreichen mich unter 030 12345678 oder mobil unter 0171 1234567.") == [
        "030 12345678",
        "0171 1234567",
    ]


@pytest.mark.parametrize(
    "text",
    [
        "ISBN 978-3-16-148410-0 is the German edition.",
        "Order #123-456-7890 has shipped.",
        "Bestellnummer 0301234567 wurde storniert.",
        "The meeting moved from 2024-03-15 to 15.03.2024 at 12:30:45.",
        "Upgrade to version 1.2.3.4 or Python 3.11.7.",
        "Date:   Mon Oct 29 16:39:05 2018 -0700",
        "failed tests: 571 612 1056",
        "Boston, MA  02110-1301  USA",
        "Decimal('+35236450.6')",
        "The total was 1 234 567 euros, about 1,234,567.89 dollars.",
        "uuid 123e4567-e89b-12d3-a456-426614174000 and commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
        "12800138000",  # eleven digits, no phone word, no grouping, not a Chinese mobile: could be anything
        "0123456789",  # a digit alphabet in code
    ],
)
def test_digit_runs_that_are_not_phones(text: str) -> None:
    assert phones(text) == []
