"""Settings of the cleaning stage: normalisation, language identification, prose and code heuristics.

Every threshold that decides a drop lives here with its meaning, so a run's manifest (which stores the resolved
config) explains each drop reason. Prose defaults follow Gopher (Rae et al. 2021, App. A) and its repetition
filters; code defaults follow The Stack / StarCoder. Prose thresholds can be overridden per language because
rules tuned on English (stop words, word lengths) would otherwise throw away good prose in other languages.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from pretrain_core.config_base import StrictModel
from pretrain_core.limits import MAX_DOC_BYTES, MAX_DOC_CHARS, MAX_LINE_CHARS, MAX_LINES, MAX_WORD_CHARS

# Gopher's English stop words: a real English sentence almost always contains at least two of them.
GOPHER_ENGLISH_STOP_WORDS = ("the", "be", "to", "of", "and", "that", "have", "with")


class NormalizeConfig(StrictModel):
    """How text is repaired before anything judges it."""

    ftfy: bool = Field(default=True, description="Repair mojibake and other encoding damage with ftfy.")
    ftfy_mode: Literal["full", "encoding_only"] = Field(
        default="full",
        description=(
            "'full': ftfy.fix_text with layout-preserving settings (mojibake, C1 controls, ligatures, line breaks, "
            "terminal escapes; quotes, character widths and HTML entities are left alone). 'encoding_only': only "
            "mojibake repair. Code always gets 'encoding_only', so its bytes change only where they were broken."
        ),
    )
    unescape_html: bool = Field(
        default=False,
        description="Also turn HTML entities (&amp;) into characters. Off: ingestion already extracts text from HTML, "
        "and documents about HTML legitimately contain entities.",
    )
    unicode_form: Literal["NFC", "NFKC", "none"] = Field(
        default="NFC",
        description="Unicode normal form for prose. NFC merges combining sequences without changing meaning; NFKC "
        "also folds compatibility characters (fullwidth forms, superscripts), which loses information.",
    )
    code_unicode_form: Literal["NFC", "none"] = Field(
        default="NFC",
        description="Unicode normal form for code. NFKC is not offered: it rewrites identifiers and string literals.",
    )
    remove_control_chars: bool = Field(
        default=True,
        description="Delete control characters that are never text (C0 except whitespace, DEL, C1, BOM). Code keeps "
        "every whitespace character, including form feed and vertical tab.",
    )


# Rough share of web pages per language, in percent, for the languages that share a script: rounded values of the
# order Common Crawl's language statistics show (not one crawl's table); only ratios, and their order of magnitude,
# matter. A language left out gets the smallest share.
WEB_LANGUAGE_SHARES = {
    "en": 45.0, "ru": 6.0, "de": 5.5, "es": 4.5, "fr": 4.5, "it": 2.5, "pt": 2.2, "nl": 2.0, "pl": 1.8,
    "tr": 1.1, "cs": 1.0, "id": 1.0, "vi": 1.0, "fa": 0.7, "sv": 0.7, "ar": 0.6, "uk": 0.6, "hu": 0.5,
    "ro": 0.5, "da": 0.4, "fi": 0.35, "bg": 0.3, "no": 0.3, "sk": 0.3, "ca": 0.2, "hr": 0.2, "lt": 0.15,
    "et": 0.1, "hi": 0.1, "lv": 0.1, "sl": 0.1, "mk": 0.03, "ne": 0.03, "sq": 0.03, "tl": 0.03, "ur": 0.03,
    "mr": 0.02, "sw": 0.02, "af": 0.01, "cy": 0.01, "so": 0.01,
}  # fmt: skip


class LangIdConfig(StrictModel):
    """Language identification: Unicode script first, langdetect's profiles only for scripts shared by many
    languages."""

    prefix_chars: int = Field(
        default=1000,
        ge=50,
        le=100_000,
        description="Size of the sample examined: the script count reads the first N characters, the n-gram scoring "
        "up to N characters of sentence-like lines. Its cost grows with the sample while its answer stops "
        "improving after a few hundred characters.",
    )
    min_confidence: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="Below this posterior probability the language is recorded as 'und' (undetermined). 0.5: the "
        "best language is at least as likely as all others together.",
    )
    scan_chars: int = Field(
        default=10_000,
        ge=50,
        le=1_000_000,
        description="How far into a document to look for sentence-like lines to fill the n-gram sample, so "
        "headers, menus and command synopses do not decide the language.",
    )
    min_letters: int = Field(
        default=10,
        ge=1,
        le=MAX_DOC_CHARS,
        description="Texts in shared scripts (Latin, Cyrillic, ...) with fewer letters in the prefix are 'und': "
        "a word or two is no evidence of a language.",
    )
    script_min_share: float = Field(
        default=0.3,
        gt=0.0,
        le=1.0,
        description="Share of words a language-specific script (Han, kana, Hangul, Thai, Greek, ...) needs to "
        "decide the language without n-gram scoring; each Han or kana character counts as a word. 0.3 lets Chinese "
        "text full of English terms stay 'zh'.",
    )
    kana_min_share: float = Field(
        default=0.05,
        gt=0.0,
        le=1.0,
        description="Share of CJK letters that must be kana for Japanese rather than Chinese: Japanese prose is "
        "rarely under 20% kana, Chinese has none.",
    )
    prior: dict[str, float] = Field(
        default_factory=lambda: dict(WEB_LANGUAGE_SHARES),
        description="Prior weight per language (ISO 639-1) in the n-gram scoring, roughly the share of web text: "
        "short text that fits two languages goes to the more common one (Dutch, not Afrikaans). Raise a "
        "language your corpus is rich in; languages left out get the smallest weight given.",
    )
    allowed: list[str] = Field(
        default_factory=list,
        description="Languages to keep (ISO 639-1). Empty keeps every language. Other languages are dropped as "
        "'language_not_allowed'. Code documents are never dropped by this list.",
    )
    keep_undetermined: bool = Field(
        default=True,
        description="Keep documents whose language is 'und' (even when `allowed` is set); they still face the prose "
        "rules. False drops them as 'language_undetermined'.",
    )

    @field_validator("prior")
    @classmethod
    def _positive_prior(cls, value: dict[str, float]) -> dict[str, float]:
        bad = {lang: weight for lang, weight in value.items() if not weight > 0}
        if bad:
            raise ValueError(f"prior weights must be positive, got {bad}")
        return dict(sorted(value.items()))


class ProseThresholds(StrictModel):
    """Gopher document-quality and repetition thresholds. A rule is off when its bound cannot be crossed."""

    min_words: int = Field(
        default=50,
        ge=0,
        le=MAX_DOC_CHARS,
        description="Fewer words than this: 'too_few_words'. In scripts written without spaces (Han, kana, Thai, "
        "Lao, Khmer, Myanmar) each character counts as one word.",
    )
    max_words: int = Field(
        le=MAX_DOC_CHARS, default=100_000, ge=1, description="More words than this: 'too_many_words'."
    )
    placeholder_phrases: list[str] = Field(
        default=["lorem ipsum"],
        description="A document holding one of these (any case) is template filler: 'placeholder_text' (C4 drops "
        "every page with 'lorem ipsum'). Empty: the rule is off.",
    )
    min_mean_word_length: float = Field(
        default=3.0,
        ge=0.0,
        le=MAX_WORD_CHARS,
        description="Mean length (characters) of words with a letter or digit below this: 'mean_word_length'. "
        "Not applied to unsegmented text, where every word is one character.",
    )
    max_mean_word_length: float = Field(
        default=10.0,
        gt=0.0,
        le=MAX_WORD_CHARS,
        description="Mean word length above this (URL lists, hashes): 'mean_word_length'.",
    )
    max_symbol_word_ratio: float = Field(
        le=1, default=0.1, ge=0.0, description="('#' + '...' + '…') per word above this: 'symbol_ratio' (tag spam)."
    )
    max_bullet_line_fraction: float = Field(
        default=0.9, ge=0.0, le=1.0, description="Share of lines starting with a bullet above this: 'bullet_lines'."
    )
    max_ellipsis_line_fraction: float = Field(
        default=0.3,
        ge=0.0,
        le=1.0,
        description="Share of lines ending in '...' or '…' above this (truncated teasers): 'ellipsis_lines'.",
    )
    min_ellipsis_lines: int = Field(
        default=2,
        ge=1,
        le=MAX_LINES,
        description="Lines ending in an ellipsis needed before 'ellipsis_lines' applies: one trailing-off sentence "
        "in a two-line passage is a narrative pause, not a list of truncated teasers.",
    )
    min_alpha_word_fraction: float = Field(
        default=0.8,
        ge=0.0,
        le=1.0,
        description="Share of words containing a letter below this (tables of numbers, symbol soup): "
        "'low_alpha_words'.",
    )
    min_stop_words: int = Field(
        default=2,
        ge=0,
        le=MAX_DOC_CHARS,
        description="Fewer distinct stop words than this: 'no_stop_words'. Only for languages with a list in "
        "`stop_words`.",
    )
    max_duplicate_line_fraction: float = Field(
        default=0.3, ge=0.0, le=1.0, description="Share of lines that repeat an earlier line: 'duplicate_lines'."
    )
    max_duplicate_line_char_fraction: float = Field(
        default=0.2, ge=0.0, le=1.0, description="Share of characters in repeated lines: 'duplicate_lines'."
    )
    min_duplicate_line_words: int = Field(
        default=3,
        ge=0,
        le=MAX_LINE_CHARS,
        description="Repeated lines of fewer words (characters x `unsegmented_ngram_scale` in unsegmented text) are "
        "structure, an attribution after each quote or a record separator, and do not count for 'duplicate_lines'.",
    )
    max_duplicate_paragraph_fraction: float = Field(
        default=0.3,
        ge=0.0,
        le=1.0,
        description="Share of paragraphs (blank-line separated) repeating an earlier one: 'duplicate_paragraphs'.",
    )
    max_duplicate_paragraph_char_fraction: float = Field(
        default=0.2, ge=0.0, le=1.0, description="Share of characters in repeated paragraphs: 'duplicate_paragraphs'."
    )
    max_top_ngram_char_share: dict[int, float] = Field(
        default_factory=lambda: {2: 0.20, 3: 0.18, 4: 0.16},
        description="n -> bound: share of characters covered by the most frequent word n-gram: 'top_ngram_share'.",
    )
    max_duplicate_ngram_char_share: dict[int, float] = Field(
        default_factory=lambda: {5: 0.15, 6: 0.14, 7: 0.13, 8: 0.12, 9: 0.11, 10: 0.10},
        description="n -> bound: share of characters inside word n-grams seen earlier in the document: "
        "'duplicate_ngram_share'.",
    )

    @field_validator("max_top_ngram_char_share", "max_duplicate_ngram_char_share")
    @classmethod
    def _ngram_bounds(cls, value: dict[int, float]) -> dict[int, float]:
        for n, share in value.items():
            if not 1 <= n <= 20 or not 0.0 <= share <= 1.0:
                raise ValueError(f"n-gram size must be 1..20 and share 0..1, got {n}: {share}")
        return dict(sorted(value.items()))

    @model_validator(mode="after")
    def _ordered_bounds(self) -> ProseThresholds:
        if self.min_words > self.max_words:
            raise ValueError("min_words exceeds max_words")
        if self.min_mean_word_length > self.max_mean_word_length:
            raise ValueError("min_mean_word_length exceeds max_mean_word_length")
        return self


class C4LinesConfig(StrictModel):
    """C4's line-level filters (Raffel et al. 2020). Off by default: they delete lines of man pages, poetry, lists
    and dialogue (no terminal punctuation, short lines), so they suit web crawls only."""

    enabled: bool = Field(default=False, description="Apply the filters below to prose documents.")
    require_terminal_punctuation: bool = Field(
        default=True, description='Delete lines not ending in . ! ? " or their CJK forms.'
    )
    min_words_per_line: int = Field(default=3, ge=0, le=MAX_LINE_CHARS, description="Delete lines with fewer words.")
    drop_javascript_lines: bool = Field(default=True, description="Delete lines mentioning 'javascript'.")
    drop_policy_lines: bool = Field(default=True, description="Delete cookie/terms/privacy-policy boilerplate lines.")
    drop_lorem_ipsum: bool = Field(
        default=True, description="Drop documents containing 'lorem ipsum': 'c4_lorem_ipsum'."
    )
    drop_curly_brace: bool = Field(
        default=False, description="Drop documents containing '{' (C4's code filter): 'c4_curly_brace'."
    )
    min_sentences: int = Field(
        default=5,
        ge=0,
        le=MAX_DOC_CHARS,
        description="Fewer sentences left after line filtering: 'c4_too_few_sentences'.",
    )


class ProseRulesConfig(StrictModel):
    """Heuristics for natural-language documents (domains other than code)."""

    default: ProseThresholds = Field(default_factory=ProseThresholds, description="Thresholds for every language.")
    per_language: dict[str, dict[str, Any]] = Field(
        default_factory=lambda: {"ko": {"min_mean_word_length": 1.5}},
        description="Partial overrides of `default` per language, e.g. {'zh': {'min_words': 200}}. Keys are "
        "ProseThresholds fields; unknown keys are errors. Setting this replaces the default, which relaxes the "
        "word-length floor for Korean (a spaced Korean word averages under three syllable blocks).",
    )
    stop_words: dict[str, list[str]] = Field(
        default_factory=lambda: {"en": list(GOPHER_ENGLISH_STOP_WORDS)},
        description="Stop-word lists per language for the 'no_stop_words' rule; languages without a list skip it, "
        "so English rules never drop German or Chinese prose.",
    )
    unsegmented_share: float = Field(
        default=0.5,
        gt=0.0,
        le=1.0,
        description="Text whose words are at least this share single characters of unsegmented scripts (Han, kana, "
        "Thai, ...) is treated as unsegmented: the mean-word-length rule does not apply.",
    )
    unsegmented_ngram_scale: int = Field(
        default=2,
        ge=1,
        le=10,
        description="In unsegmented text the repeated-n-gram rule ('duplicate_ngram_share') looks at character "
        "n-grams this many times longer than its n: a Chinese or Japanese word averages about two characters, and "
        "unscaled, repeated terms read as repeated phrases (Japanese man pages: median 5-gram repeat share 0.10, "
        "English 0.02). The top-n-gram rule is not scaled: its short n-grams already behave like words.",
    )
    c4_lines: C4LinesConfig = Field(default_factory=C4LinesConfig, description="Optional C4 line filters.")

    @model_validator(mode="after")
    def _overrides_valid(self) -> ProseRulesConfig:
        for lang in self.per_language:
            self.thresholds_for(lang)
        return self

    def thresholds_for(self, lang: str) -> ProseThresholds:
        """The default thresholds with this language's overrides applied (validated like any config)."""
        override = self.per_language.get(lang)
        if not override:
            return self.default
        return ProseThresholds.model_validate({**self.default.model_dump(), **override})


class CodeRulesConfig(StrictModel):
    """Heuristics for source files (domain 'code'), after The Stack and StarCoder."""

    max_file_bytes: int = Field(
        default=1_000_000,
        ge=1,
        le=MAX_DOC_BYTES,
        description="Files larger than this (UTF-8 bytes), mostly data: 'code_too_large'.",
    )
    max_line_length: int = Field(
        default=1000,
        ge=1,
        le=MAX_LINE_CHARS,
        description="Any line longer than this (minified or embedded data): 'code_line_too_long'.",
    )
    max_mean_line_length: float = Field(
        le=MAX_LINE_CHARS, default=100.0, gt=0.0, description="Mean line length above this: 'code_mean_line_too_long'."
    )
    min_alnum_fraction: float = Field(
        default=0.25,
        ge=0.0,
        le=1.0,
        description="Share of alphanumeric characters below this (encoded blobs, ASCII art): 'code_low_alnum'.",
    )
    long_line_exempt_languages: list[str] = Field(
        default_factory=lambda: ["markdown", "restructuredtext", "tex", "text"],
        description="code_language values exempt from both line-length rules: their paragraphs are single lines.",
    )
    autogenerated_markers: list[str] = Field(
        default_factory=lambda: [
            "auto-generated",
            "autogenerated",
            "automatically generated",
            "do not edit",
            "@generated",
        ],
        description="Case-insensitive phrases that mark generated files when found in the first lines: "
        "'code_autogenerated'. Empty disables the rule.",
    )
    autogenerated_scan_lines: int = Field(
        le=MAX_LINES, default=5, ge=0, description="How many leading lines are searched for autogenerated markers."
    )


class CleanConfig(StrictModel):
    """The cleaning stage: normalise, identify the language, then drop documents that fail the heuristics."""

    normalize: NormalizeConfig = Field(default_factory=NormalizeConfig, description="Text repair.")
    langid: LangIdConfig = Field(default_factory=LangIdConfig, description="Language identification and filtering.")
    prose: ProseRulesConfig = Field(default_factory=ProseRulesConfig, description="Prose heuristics.")
    code: CodeRulesConfig = Field(default_factory=CodeRulesConfig, description="Code heuristics.")
