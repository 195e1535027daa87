"""Checksums and format rules that turn "looks like a number" into "is an identifier".

A pattern alone flags every long digit run; these checks are what keep ISBNs, order numbers and hashes out. Each
function takes the matched text (separators allowed) and answers whether it is a valid identifier of its kind.
"""

from __future__ import annotations

import datetime
import math
from collections import Counter

# IBAN length per country (ISO 13616 registry).
IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BR": 29, "BY": 28,
    "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18,
    "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22,
    "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20,
    "LU": 20, "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MR": 27, "MT": 31, "MU": 30, "NL": 18, "NO": 15,
    "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "SA": 24, "SC": 31, "SE": 24, "SI": 19,
    "SK": 24, "SM": 27, "ST": 25, "SV": 28, "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}  # fmt: skip

# GB 11643-1999: weights of the 17 leading digits and the check character for each remainder mod 11.
_CN_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_CN_ID_CHECK = "10X98765432"

# UK NINO: prefixes never issued (HMRC NIM39110).
_NINO_BAD_PREFIXES = {"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"}


def digits_of(text: str) -> str:
    return "".join(c for c in text if c.isdigit())


def luhn_valid(number: str) -> bool:
    """The Luhn mod-10 check every payment card number carries."""
    digits = digits_of(number)
    if not digits:
        return False
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def card_issuer_known(digits: str) -> bool:
    """Whether the leading digits and length fit a real card network (Visa, Mastercard, Amex, Discover, JCB,
    Diners, UnionPay, Maestro), so Luhn-valid serial numbers of other kinds are not taken for cards."""
    length = len(digits)
    prefix2, prefix4 = int(digits[:2]), int(digits[:4])
    networks = (
        digits[0] == "4" and length in (13, 16, 19),  # Visa
        (51 <= prefix2 <= 55 or 2221 <= prefix4 <= 2720) and length == 16,  # Mastercard
        prefix2 in (34, 37) and length == 15,  # American Express
        (digits.startswith("6011") or prefix2 == 65 or 644 <= int(digits[:3]) <= 649) and 16 <= length <= 19,
        3528 <= prefix4 <= 3589 and 16 <= length <= 19,  # JCB
        (prefix2 in (36, 38, 39) or 300 <= int(digits[:3]) <= 305) and 14 <= length <= 19,  # Diners Club
        prefix2 == 62 and 16 <= length <= 19,  # UnionPay
        (prefix2 == 50 or 56 <= prefix2 <= 69) and 12 <= length <= 19,  # Maestro
    )
    return any(networks)


def card_valid(text: str) -> bool:
    """13-19 digits of a known network passing Luhn, not one repeated digit."""
    digits = digits_of(text)
    return 13 <= len(digits) <= 19 and len(set(digits)) > 1 and card_issuer_known(digits) and luhn_valid(digits)


def iban_valid(text: str) -> bool:
    """Country length from the registry and the ISO 7064 mod-97 check (remainder 1)."""
    compact = "".join(text.split()).upper()
    if IBAN_LENGTHS.get(compact[:2]) != len(compact) or not compact.isalnum():
        return False
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in rearranged)) % 97 == 1


def us_ssn_valid(text: str) -> bool:
    """SSA rules: area not 000, 666 or 900-999; group not 00; serial not 0000."""
    digits = digits_of(text)
    if len(digits) != 9:
        return False
    area, group, serial = digits[:3], digits[3:5], digits[5:]
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def cn_resident_id_valid(text: str) -> bool:
    """18-character PRC resident id: region, a real birth date, sequence and the GB 11643 check character."""
    compact = text.upper()
    if len(compact) != 18 or not compact[:17].isdigit() or compact[0] not in "12345678":
        return False
    if not _real_date(int(compact[6:10]), int(compact[10:12]), int(compact[12:14]), first_year=1900):
        return False
    total = sum(int(d) * w for d, w in zip(compact[:17], _CN_ID_WEIGHTS, strict=True))
    return _CN_ID_CHECK[total % 11] == compact[17]


def de_tax_id_valid(text: str) -> bool:
    """German Steuerliche Identifikationsnummer: 11 digits, no leading 0, in the first ten exactly one digit
    repeated (twice or thrice) and ISO 7064 MOD 11,10 check digit."""
    digits = digits_of(text)
    if len(digits) != 11 or digits[0] == "0":
        return False
    counts = Counter(digits[:10]).values()
    if sorted(c for c in counts if c > 1) not in ([2], [3]):
        return False
    product = 10
    for char in digits[:10]:
        total = (int(char) + product) % 10 or 10
        product = (total * 2) % 11
    return (11 - product) % 10 == int(digits[10])


def jp_my_number_valid(text: str) -> bool:
    """Japanese Individual Number (My Number): 12 digits, the last a check digit over the first eleven with weights
    2-7 then 2-6 from the right (remainder 0 or 1 gives 0, else 11 minus it)."""
    digits = digits_of(text)
    if len(digits) != 12:
        return False
    weights = [n + 1 if n <= 6 else n - 5 for n in range(1, 12)]
    remainder = sum(int(d) * w for d, w in zip(reversed(digits[:11]), weights, strict=True)) % 11
    return int(digits[11]) == (0 if remainder <= 1 else 11 - remainder)


def fr_nir_valid(text: str) -> bool:
    """French social security number (NIR): sex, birth year and month, department (2A/2B for Corsica), commune,
    order, and the key 97 - (number mod 97)."""
    compact = "".join(text.split()).upper()
    if len(compact) != 15 or compact[0] not in "12378":
        return False
    month = compact[3:5]
    if not month.isdigit() or not (1 <= int(month) <= 12 or 20 <= int(month) <= 42 or 50 <= int(month) <= 99):
        return False
    body = compact[:13].replace("2A", "19").replace("2B", "18")
    if not body.isdigit() or not compact[13:].isdigit():
        return False
    return 97 - int(body) % 97 == int(compact[13:])


def uk_nino_valid(text: str) -> bool:
    """UK National Insurance number: two prefix letters from the allowed sets, six digits, suffix A-D."""
    compact = "".join(text.split()).upper()
    if len(compact) != 9 or not compact[2:8].isdigit() or compact[8] not in "ABCD":
        return False
    first, second = compact[0], compact[1]
    return (
        first not in "DFIQUV"
        and second not in "DFIOQUV"
        and compact[:2] not in _NINO_BAD_PREFIXES
        and first.isalpha()
        and second.isalpha()
    )


def shannon_entropy(text: str) -> float:
    """Bits per character: random keys are near log2 of their alphabet, words and placeholders far below."""
    if not text:
        return 0.0
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def looks_random(value: str, min_entropy: float = 3.0, min_classes: int = 2) -> bool:
    """A secret-looking value: high entropy, mixed character classes, and not an obvious placeholder."""
    lowered = value.lower()
    if any(word in lowered for word in ("example", "your", "xxxx", "changeme", "placeholder", "dummy", "<", "${")):
        return False
    classes = sum((any(c.islower() for c in value), any(c.isupper() for c in value), any(c.isdigit() for c in value)))
    return classes >= min_classes and shannon_entropy(value) >= min_entropy


def _real_date(year: int, month: int, day: int, first_year: int) -> bool:
    if not first_year <= year <= 2100:
        return False
    try:
        datetime.date(year, month, day)
    except ValueError:
        return False
    return True
