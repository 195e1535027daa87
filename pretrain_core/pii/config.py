"""Settings of the PII stage: which kinds of personal data to look for, and what to do with a document that has some.

Structured kinds (emails, phones, IPs, cards, IBANs, national ids, secrets) are found by patterns with checksum and
context validation; person names and street addresses, which no pattern captures, by a small learned tagger. The
density limit follows Dolma (Soldaini et al. 2024), which removes documents with more than five PII matches and
masks the rest: such documents are usually contact lists or leaked records, not prose with an incidental address.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import Field, field_validator

from pretrain_core.config_base import StrictModel
from pretrain_core.limits import MAX_DOC_CHARS

PiiType = Literal["email", "phone", "ip", "card", "iban", "national_id", "secret", "person", "address"]
PII_TYPES: tuple[PiiType, ...] = get_args(PiiType)  # the one list of PII kinds
# Kinds the learned tagger finds; the rest come from patterns.
CLASSIFIER_TYPES: tuple[PiiType, ...] = ("person", "address")
PATTERN_TYPES: tuple[PiiType, ...] = tuple(kind for kind in PII_TYPES if kind not in CLASSIFIER_TYPES)


class PiiConfig(StrictModel):
    """What counts as PII, how it is replaced, and when a document has so much of it that it is dropped."""

    types: list[PiiType] = Field(
        default=list(PII_TYPES), min_length=1, description="Kinds of PII to detect; anything else is left alone."
    )
    code_types: list[PiiType] = Field(
        default=list(PATTERN_TYPES),
        description="Kinds the patterns find in code documents (domain 'code'): every structured kind, each with "
        "its validator (constants, hashes, UUIDs and version numbers do not pass them), so a card number in a test "
        "fixture or a phone number in a comment is redacted. Names and addresses: see `code_tagger_types`.",
    )
    code_tagger_types: list[Literal["person", "address"]] = Field(
        default=["person"],
        description="Kinds the tagger finds in code documents, in their comments and string literals only (found "
        "by Pygments' lexer for the file's language), where authors and example data are written; a candidate "
        "with a word the file uses as an identifier ('Raise KeyError') is not a name. Addresses are left out by "
        "default: in code, tables of numbers and dates look like them.",
    )
    action: Literal["redact", "tag", "drop"] = Field(
        default="redact",
        description="'redact': replace each match with its placeholder. 'tag': keep the text, only fill pii_count and "
        "pii_types. 'drop': drop every document with a match (reason 'contains_pii').",
    )
    placeholder_format: str = Field(
        default="<{TYPE}>",
        description="Replacement text; {TYPE} becomes the upper-case kind (EMAIL, PHONE, IP, CARD, IBAN, "
        "NATIONAL_ID, SECRET, PERSON, ADDRESS), {type} the lower-case one.",
    )
    max_count: int | None = Field(
        default=None,
        ge=0,
        le=MAX_DOC_CHARS,
        description="Drop a document with more matches (of `density_types`) than this (reason 'pii_density'); Dolma "
        "uses 5. None: no limit.",
    )
    max_per_1000_chars: float | None = Field(
        default=5.0,
        gt=0,
        le=1000,
        description="Drop a document with more matches (of `density_types`) per 1,000 characters than this (reason "
        "'pii_density'), once it has at least `density_min_count` of them. None: no limit.",
    )
    density_types: list[PiiType] = Field(
        default=list(PATTERN_TYPES),
        description="Kinds counted for `max_count` and `max_per_1000_chars`. Names and addresses are left out: "
        "narrative text (fiction, news, scripture) is full of names, which are redacted but no reason to drop it.",
    )
    density_min_count: int = Field(
        default=3,
        ge=1,
        le=MAX_DOC_CHARS,
        description="Matches a document needs before the density limit applies, so one email in a tweet is masked, "
        "not a reason to drop it.",
    )
    keep_private_ips: bool = Field(
        default=True,
        description="Leave private, loopback, link-local and documentation addresses (not `is_global`) as they are: "
        "they identify nobody and are common in technical text.",
    )
    classifier_enabled: bool = Field(
        default=True, description="Find person names and street addresses with the learned tagger."
    )
    classifier_threshold: float = Field(
        default=0.8,
        gt=0.0,
        lt=1.0,
        description="Probability a token needs to be tagged a name or address part. High, because a wrongly "
        "redacted word damages good text while a missed name is rarely harmful in web-scale data.",
    )
    classifier_langs: list[str] = Field(
        default=["en", "de", "fr", "zh", "ja"],
        min_length=1,
        description="Document languages the tagger runs on: those it was trained for.",
    )
    detect_language: bool = Field(
        default=True,
        description="Give documents without a language ('und', as plain JSONL run alone has) one, with the clean "
        "stage's language id at its defaults, so the tagger still runs on them. Counted in stat "
        "'pii_lang_detected'; prose the tagger could not run on (another language) in 'pii_tagger_not_run', code "
        "whose comments and strings could not be read for names (no language Pygments knows) in "
        "'pii_code_prose_not_run'.",
    )
    classifier_model: str | None = Field(
        default=None,
        description="fsspec URL of a tagger model (safetensors) built by `python -m pretrain_eval.pii_tagger`; "
        "None: the model shipped with the package. Read as data, never unpickled.",
    )

    @field_validator("placeholder_format")
    @classmethod
    def _placeholder_names_the_type(cls, value: str) -> str:
        try:
            value.format(TYPE="EMAIL", type="email")
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError(f"placeholder_format may only use {{TYPE}} and {{type}}: {exc}") from None
        return value

    def placeholder(self, kind: str) -> str:
        return self.placeholder_format.format(TYPE=kind.upper(), type=kind)

    def uses_classifier(self) -> bool:
        return self.classifier_enabled and any(t in self.types for t in CLASSIFIER_TYPES)
