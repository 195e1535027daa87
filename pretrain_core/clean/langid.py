"""Language identification: the Unicode script decides where it can, langdetect where scripts are shared.

langdetect alone confuses Chinese and Japanese (both are mostly Han characters) and is slow (a few hundred
documents per second), but a script such as kana, Hangul or Thai names its language outright. So letters in the
first ``prefix_chars`` characters are counted by script; a language-specific script with enough of the letters
decides, and only Latin, Cyrillic, Arabic and Devanagari text goes to langdetect, which is given sentence-like lines
rather than whatever the document starts with.

langdetect is random by design: every detection draws n-grams from a generator. A private factory with seed 0
creates a fresh detector per call, so a text gets the same answer in every process and every run, whatever was
detected before it. Code documents never come here: the stage labels them "code".
"""

from __future__ import annotations

import bisect
import functools
import string
from dataclasses import dataclass

from langdetect import DetectorFactory
from langdetect.detector_factory import PROFILES_DIRECTORY
from langdetect.lang_detect_exception import LangDetectException

from pretrain_core.clean.config import LangIdConfig

UNDETERMINED = "und"

# (first, last, script) code point ranges of the scripts that matter for the decision, sorted by first.
_SCRIPT_RANGES = sorted(
    [
        (0x0041, 0x024F, "latin"),
        (0x0370, 0x03FF, "greek"),
        (0x0400, 0x052F, "cyrillic"),
        (0x0530, 0x058F, "armenian"),
        (0x0590, 0x05FF, "hebrew"),
        (0x0600, 0x06FF, "arabic"),
        (0x0750, 0x077F, "arabic"),
        (0x0900, 0x097F, "devanagari"),
        (0x0980, 0x09FF, "bengali"),
        (0x0A00, 0x0A7F, "gurmukhi"),
        (0x0A80, 0x0AFF, "gujarati"),
        (0x0B80, 0x0BFF, "tamil"),
        (0x0C00, 0x0C7F, "telugu"),
        (0x0C80, 0x0CFF, "kannada"),
        (0x0D00, 0x0D7F, "malayalam"),
        (0x0D80, 0x0DFF, "sinhala"),
        (0x0E00, 0x0E7F, "thai"),
        (0x0E80, 0x0EFF, "lao"),
        (0x0F00, 0x0FFF, "tibetan"),
        (0x1000, 0x109F, "myanmar"),
        (0x10A0, 0x10FF, "georgian"),
        (0x1100, 0x11FF, "hangul"),
        (0x1200, 0x137F, "ethiopic"),
        (0x1780, 0x17FF, "khmer"),
        (0x1E00, 0x1EFF, "latin"),
        (0x1F00, 0x1FFF, "greek"),
        (0x3040, 0x30FF, "kana"),
        (0x3130, 0x318F, "hangul"),
        (0x31F0, 0x31FF, "kana"),
        (0x3400, 0x4DBF, "han"),
        (0x4E00, 0x9FFF, "han"),
        (0xAC00, 0xD7AF, "hangul"),
        (0xF900, 0xFAFF, "han"),
        (0xFF21, 0xFF5A, "latin"),
        (0xFF66, 0xFF9F, "kana"),
        (0x20000, 0x3134F, "han"),
    ]
)
_RANGE_STARTS = [first for first, _, _ in _SCRIPT_RANGES]

# Scripts used by (practically) one language. Han and kana are decided together: see `_cjk_language`.
SCRIPT_LANGUAGE = {
    "greek": "el",
    "armenian": "hy",
    "hebrew": "he",
    "bengali": "bn",
    "gurmukhi": "pa",
    "gujarati": "gu",
    "tamil": "ta",
    "telugu": "te",
    "kannada": "kn",
    "malayalam": "ml",
    "sinhala": "si",
    "thai": "th",
    "lao": "lo",
    "tibetan": "bo",
    "myanmar": "my",
    "georgian": "ka",
    "hangul": "ko",
    "ethiopic": "am",
    "khmer": "km",
}
_LANGUAGE_SCRIPTS = {lang: {script} for script, lang in SCRIPT_LANGUAGE.items()} | {
    "zh": {"han"},
    "ja": {"han", "kana"},
}
# A line joins the langdetect sample when it has this many tokens and this share of them are plain words.
_SAMPLE_MIN_TOKENS = 4
_SAMPLE_MIN_PLAIN_SHARE = 0.7
_EDGE_PUNCTUATION = string.punctuation + "“”‘’«»„¿¡…"
# langdetect distinguishes simplified and traditional Chinese; the contract stores ISO 639-1.
_LANGDETECT_CODES = {"zh-cn": "zh", "zh-tw": "zh"}


@dataclass(frozen=True)
class LangGuess:
    """A language code (ISO 639-1 or 'und') and the confidence in it (0..1)."""

    lang: str
    score: float


def script_of(char: str) -> str | None:
    """The script of one character among those in `_SCRIPT_RANGES`, None for any other."""
    code = ord(char)
    index = bisect.bisect_right(_RANGE_STARTS, code) - 1
    if index < 0:
        return None
    first, last, script = _SCRIPT_RANGES[index]
    return script if first <= code <= last else None


def letter_scripts(text: str) -> tuple[dict[str, int], int]:
    """Letters per script in ``text``, and the number of letters (including those of unlisted scripts)."""
    counts: dict[str, int] = {}
    letters = 0
    for char in text:
        if not char.isalpha():
            continue
        letters += 1
        script = "latin" if char.isascii() else script_of(char)
        if script is not None:
            counts[script] = counts.get(script, 0) + 1
    return counts, letters


def detect_language(text: str, cfg: LangIdConfig) -> LangGuess:
    """The language of the first ``cfg.prefix_chars`` characters of ``text``; 'und' when it cannot tell."""
    prefix = text[: cfg.prefix_chars]
    counts, letters = letter_scripts(prefix)
    if letters == 0:
        return LangGuess(UNDETERMINED, 0.0)
    by_script = _script_language(counts, letters, cfg)
    if by_script is not None:
        return by_script
    if letters < cfg.min_letters:
        return LangGuess(UNDETERMINED, 0.0)
    guess = _langdetect(prose_sample(text, cfg.prefix_chars, cfg.scan_chars))
    if guess.lang == UNDETERMINED or guess.score < cfg.min_confidence:
        return LangGuess(UNDETERMINED, guess.score)
    scripts = _LANGUAGE_SCRIPTS.get(guess.lang)
    if scripts is not None and not any(counts.get(script) for script in scripts):
        return LangGuess(UNDETERMINED, guess.score)  # e.g. "ko" for text without a single Hangul letter
    return guess


def prose_sample(text: str, size: int, scan_chars: int) -> str:
    """Up to ``size`` characters of sentence-like lines from the first ``scan_chars``, else the plain prefix.

    Menus, headers and command synopses ("ssh [-46AaCf] [-B bind_interface]") are letters without language and
    mislead langdetect; lines made mostly of plain words are what it was trained on.
    """
    if len(text) <= size:
        return text
    picked: list[str] = []
    picked_chars = 0
    for line in text[:scan_chars].splitlines():
        tokens = line.split()
        if len(tokens) >= _SAMPLE_MIN_TOKENS and _plain_word_share(tokens) >= _SAMPLE_MIN_PLAIN_SHARE:
            picked.append(" ".join(tokens))
            picked_chars += len(picked[-1]) + 1
            if picked_chars >= size:
                break
    if picked_chars < size // 4:
        return text[:size]
    return "\n".join(picked)[:size]


def _plain_word_share(tokens: list[str]) -> float:
    return sum(1 for token in tokens if token.strip(_EDGE_PUNCTUATION).isalpha()) / len(tokens)


def _script_language(counts: dict[str, int], letters: int, cfg: LangIdConfig) -> LangGuess | None:
    """The language a language-specific script decides, or None when the letters are in shared scripts."""
    cjk = counts.get("han", 0) + counts.get("kana", 0)
    best_script, best = max(
        ((script, n) for script, n in counts.items() if script in SCRIPT_LANGUAGE),
        key=lambda item: item[1],
        default=("", 0),
    )
    if cjk >= best and cjk / letters >= cfg.script_min_share:
        is_japanese = counts.get("kana", 0) / cjk >= cfg.kana_min_share
        return LangGuess("ja" if is_japanese else "zh", round(cjk / letters, 4))
    if best and best / letters >= cfg.script_min_share:
        return LangGuess(SCRIPT_LANGUAGE[best_script], round(best / letters, 4))
    return None


@functools.cache
def _factory() -> DetectorFactory:
    """This process's langdetect profiles (loaded once, ~1 s) with a fixed seed."""
    factory = DetectorFactory()
    factory.load_profile(PROFILES_DIRECTORY)
    factory.set_seed(0)
    return factory


def _langdetect(text: str) -> LangGuess:
    detector = _factory().create()
    detector.append(text)
    try:
        ranked = detector.get_probabilities()
    except LangDetectException:  # no usable features (digits, punctuation, URLs only)
        return LangGuess(UNDETERMINED, 0.0)
    if not ranked:
        return LangGuess(UNDETERMINED, 0.0)
    top = ranked[0]
    return LangGuess(_LANGDETECT_CODES.get(top.lang, top.lang), round(float(top.prob), 4))
