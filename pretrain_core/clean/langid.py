"""Language identification: the Unicode script decides where it can; where a script is shared by many languages,
langdetect's n-gram profiles score that script's languages, all n-grams at once and against a prior.

Plain langdetect confuses Chinese and Japanese (both mostly Han), names rare languages for short text (Dutch as
Afrikaans, Spanish as Catalan or Somali) and samples n-grams at random, so unseeded it answers differently from run
to run. Here instead:

1. The letters of the first ``prefix_chars`` characters are grouped into words by script (a run of letters of one
   script is one word; every Han or kana character is one, as in unsegmented writing, so a Japanese sentence with
   an English term is still mostly Japanese). A language-specific script (kana, Hangul, Thai, Greek, ...) holding
   ``script_min_share`` of the words decides; Han and kana decide together, by the share of kana.
2. Otherwise the dominant shared script (Latin, Cyrillic, Arabic, Devanagari) limits the candidates to the languages
   langdetect knows in it, and every character 1- to 3-gram of a sample of sentence-like lines is scored with
   langdetect's own n-gram rules and profiles: a naive-Bayes log-likelihood per language, weighted by
   ``_EVIDENCE_WEIGHT`` (the three n-gram orders count each character's evidence several times, which overstates
   certainty), plus the log of the language's prior (``cfg.prior``: roughly its share of web text, so a short
   ambiguous snippet goes to the language it most likely is in a real corpus). The posterior of the best language is
   the score; below ``min_confidence`` the answer is 'und'.

Nothing is random, so a text gets the same answer in every process and run; scoring all n-grams in numpy is also
faster than langdetect's sampling. Code documents never come here: the stage labels them "code".
"""

from __future__ import annotations

import functools
import re
import string
import threading
from dataclasses import dataclass

import numpy as np
from langdetect import DetectorFactory
from langdetect.detector_factory import PROFILES_DIRECTORY
from langdetect.utils.ngram import NGram

from pretrain_core.clean.config import LangIdConfig
from pretrain_core.clean.script_kernel import count_scripts
from pretrain_core.unicode_table import ALPHA, char_flags, code_points

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
# Languages of langdetect's profiles per script they share; a text in one of these scripts is scored against them.
SHARED_SCRIPT_LANGUAGES = {
    "latin": (
        "af", "ca", "cs", "cy", "da", "de", "en", "es", "et", "fi", "fr", "hr", "hu", "id", "it", "lt",
        "lv", "nl", "no", "pl", "pt", "ro", "sk", "sl", "so", "sq", "sv", "sw", "tl", "tr", "vi",
    ),
    "cyrillic": ("bg", "mk", "ru", "uk"),
    "arabic": ("ar", "fa", "ur"),
    "devanagari": ("hi", "mr", "ne"),
}  # fmt: skip
# Scripts written without spaces between words: each character counts as a word.
_UNSEGMENTED_SCRIPTS = frozenset({"han", "kana", "thai", "lao", "khmer", "myanmar"})
# The profiles score 1-, 2- and 3-grams, so most characters weigh in about twice over; halving the log-likelihood
# keeps the posterior honest (chosen on the dev split of data/labelled/langid among 1, 2/3, 1/2, 1/3 and 1/4).
_EVIDENCE_WEIGHT = 0.5
# langdetect's smoothing (alpha 0.5 / base frequency 10,000): the probability of an n-gram a language never showed.
_UNSEEN_NGRAM = 0.5 / 10_000
# langdetect strips these before counting n-grams; they carry no language.
_URL = re.compile(r"https?://[-_.?&~;+=/#0-9A-Za-z]{1,2076}")
_EMAIL = re.compile(r"[-_.0-9A-Za-z]{1,64}@[-_0-9A-Za-z]{1,255}[-_.0-9A-Za-z]{1,255}")
_ASCII_LETTERS = re.compile(r"[A-Za-z]+")
# A line joins the scoring sample when it has this many tokens and this share of them are plain words.
_SAMPLE_MIN_TOKENS = 4
_SAMPLE_MIN_PLAIN_SHARE = 0.7
_EDGE_PUNCTUATION = string.punctuation + "“”‘’«»„¿¡…"


@dataclass(frozen=True)
class LangGuess:
    """A language code (ISO 639-1 or 'und') and the confidence in it (0..1)."""

    lang: str
    score: float


@dataclass(frozen=True)
class ScriptCounts:
    """Words and letters per listed script in a text, and words and letters of any script."""

    words: dict[str, int]
    letters: dict[str, int]
    total_words: int
    total_letters: int


def script_counts(text: str) -> ScriptCounts:
    """Words and letters per script: a run of letters of one script is a word, each letter of an unsegmented
    script is one. Scripts appear in the order of their first letter; letters of no listed script count in the
    totals only (a compiled pass, `script_kernel.count_scripts`)."""
    table, names, unsegmented = _script_table()
    letters, words, first, total_letters, total_words = count_scripts(code_points(text), table, unsegmented)
    seen = sorted((int(first[i]), i) for i in range(1, len(names) + 1) if first[i] >= 0)
    return ScriptCounts(
        {names[i - 1]: int(words[i]) for _, i in seen},
        {names[i - 1]: int(letters[i]) for _, i in seen},
        int(total_words),
        int(total_letters),
    )


@functools.cache
def _script_table() -> tuple[np.ndarray, tuple[str, ...], np.ndarray]:
    """Code point -> script number for `count_scripts` (0: not a letter (`str.isalpha`), 1..n: `names`, n + 1:
    a letter of no listed script; ASCII letters are Latin), the names, and which numbers are unsegmented."""
    names = tuple(dict.fromkeys(script for _, _, script in _SCRIPT_RANGES))
    number = {name: i + 1 for i, name in enumerate(names)}
    is_letter = (char_flags() & ALPHA) != 0
    scripts = np.full(0x110000, len(names) + 1, dtype=np.uint8)
    for first, last, script in _SCRIPT_RANGES:
        scripts[first : last + 1] = number[script]
    scripts[:0x80] = number["latin"]
    table = np.where(is_letter, scripts, 0).astype(np.uint8)
    unsegmented = np.zeros(len(names) + 2, dtype=np.bool_)
    unsegmented[[number[name] for name in names if name in _UNSEGMENTED_SCRIPTS]] = True
    return table, names, unsegmented


def detect_language(text: str, cfg: LangIdConfig) -> LangGuess:
    """The language of the first ``cfg.prefix_chars`` characters of ``text``; 'und' when it cannot tell."""
    counts = script_counts(text[: cfg.prefix_chars])
    if counts.total_letters == 0:
        return LangGuess(UNDETERMINED, 0.0)
    by_script = _script_language(counts, cfg)
    if by_script is not None:
        return by_script
    # the script with the most letters picks the candidates: abbreviations (Latin "mb" in Russian) are words too
    script = max(
        (s for s in SHARED_SCRIPT_LANGUAGES if counts.letters.get(s)), key=lambda s: counts.letters[s], default=None
    )
    if script is None or counts.total_letters < cfg.min_letters:
        return LangGuess(UNDETERMINED, 0.0)
    guess = profile_language(prose_sample(text, cfg.prefix_chars, cfg.scan_chars), script, cfg.prior)
    if guess.score < cfg.min_confidence:
        return LangGuess(UNDETERMINED, guess.score)
    return guess


def profile_language(sample: str, script: str, prior: dict[str, float]) -> LangGuess:
    """The most probable language of ``script``'s languages for ``sample``, scored on all its n-grams."""
    if script != "latin":  # English terms in Russian or Arabic text say nothing about which of their languages
        sample = _ASCII_LETTERS.sub(" ", sample)
    log_likelihood, ngrams = _script_scores(script).log_likelihood(*_profiles().words(sample))
    if not ngrams:
        return LangGuess(UNDETERMINED, 0.0)
    languages = SHARED_SCRIPT_LANGUAGES[script]
    floor = min(prior.values(), default=1.0)
    log_prior = np.log([prior.get(lang, floor) for lang in languages])
    scores = _EVIDENCE_WEIGHT * log_likelihood + log_prior
    posterior = np.exp(scores - scores.max())
    posterior /= posterior.sum()
    best = int(posterior.argmax())
    return LangGuess(languages[best], round(float(posterior[best]), 4))


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


def _script_language(counts: ScriptCounts, cfg: LangIdConfig) -> LangGuess | None:
    """The language a language-specific script decides, or None when the words are in shared scripts."""
    words, total = counts.words, counts.total_words
    cjk = words.get("han", 0) + words.get("kana", 0)
    best_script, best = max(
        ((script, n) for script, n in words.items() if script in SCRIPT_LANGUAGE),
        key=lambda item: item[1],
        default=("", 0),
    )
    if cjk >= best and cjk / total >= cfg.script_min_share:
        is_japanese = words.get("kana", 0) / cjk >= cfg.kana_min_share
        return LangGuess("ja" if is_japanese else "zh", round(cjk / total, 4))
    if best and best / total >= cfg.script_min_share:
        return LangGuess(SCRIPT_LANGUAGE[best_script], round(best / total, 4))
    return None


@dataclass(frozen=True)
class _Profiles:
    """langdetect's n-gram profiles as one matrix: log P(n-gram | language), a row per n-gram."""

    rows: dict[str, int]
    columns: dict[str, int]
    log_probs: np.ndarray  # float32, (n-grams, languages)

    def words(self, text: str) -> tuple[list[str], str]:
        """The words of ``text`` by langdetect's rules (its character normalisation; URLs and e-mail addresses
        out): those a space follows, and the text's last word when none does ('' otherwise). langdetect's n-grams
        never span a space, so a text's n-grams are its words' (`_word_rows`) in turn."""
        text = NGram.normalize_vi(_EMAIL.sub(" ", _URL.sub(" ", text))).translate(_NORMALIZED)
        words = text.split(" ")
        return list(filter(None, words[:-1])), words[-1]


class _Normalization(dict[int, str]):
    """langdetect's per-character normalisation (`NGram.normalize`) as a `str.translate` table, filled as
    characters are first seen."""

    def __missing__(self, code: int) -> str:
        value: str = NGram.normalize(chr(code))
        self[code] = value
        return value


_NORMALIZED = _Normalization()


# Words up to this long have their sums kept (`_ScriptScores`); longer runs without a space (identifiers, blobs)
# are rare and rarely repeat.
_CACHED_WORD_CHARS = 24
_CACHED_WORDS = 1 << 16  # per script: 16 MB of sums for the Latin script's 31 languages


class _ScriptScores:
    """Per normalised word, the sum of log P(n-gram | language) over its n-grams for one script's languages,
    worked out on first sight and kept (the first `_CACHED_WORDS` words; then the table starts afresh): running
    text repeats its words, so a text's sum gathers a row per word instead of one per n-gram.

    The order of the additions does not change a bit of the result: every profile value is a float32 of magnitude
    at least 1.14 (a multiple of 2**-23; `test_langid` checks the bound) and a text's sum stays far below 2**30, so
    every partial sum is exact in float64. Shard tasks in threads share the table, so a call holds its lock."""

    def __init__(self, log_probs: np.ndarray) -> None:
        self._lock = threading.Lock()
        self._log_probs = log_probs
        self._rows: tuple[dict[str, int], dict[str, int]] = ({}, {})  # unspaced, spaced
        self._sums = np.zeros((_CACHED_WORDS, log_probs.shape[1]))
        self._ngrams = np.zeros(_CACHED_WORDS, dtype=np.int64)
        self._filled = 0

    def log_likelihood(self, spaced: list[str], last: str) -> tuple[np.ndarray, int]:
        """The summed log probabilities of the n-grams of the words (`_Profiles.words`) per language, and how many
        n-grams the profiles know."""
        with self._lock:
            return self._log_likelihood(spaced, last)

    def _log_likelihood(self, spaced: list[str], last: str) -> tuple[np.ndarray, int]:
        if len(spaced) + 1 > _CACHED_WORDS:
            return self._sum_rows([*(r for word in spaced for r in _word_rows(word, True)), *_word_rows(last, False)])
        if self._filled + len(spaced) + 1 > _CACHED_WORDS:
            self._rows, self._filled = ({}, {}), 0
        rows = self._known_rows(spaced, last)
        uncached: list[int] = []
        if None in rows:  # words seen for the first time (or too long to keep)
            for word, is_spaced in [(word, True) for word in spaced] + ([(last, False)] if last else []):
                if word in self._rows[is_spaced]:
                    continue
                if len(word) > _CACHED_WORD_CHARS:
                    uncached += _word_rows(word, is_spaced)
                    continue
                self._rows[is_spaced][word] = self._filled
                self._sums[self._filled], self._ngrams[self._filled] = self._sum_rows(_word_rows(word, is_spaced))
                self._filled += 1
            rows = [row for row in self._known_rows(spaced, last) if row is not None]
        cached = np.array(rows, dtype=np.int64)
        total, ngrams = self._sum_rows(uncached)
        return total + self._sums[cached].sum(axis=0), ngrams + int(self._ngrams[cached].sum())

    def _known_rows(self, spaced: list[str], last: str) -> list[int | None]:
        """The table's row of each word (None: not kept), looked up without a Python loop."""
        rows: list[int | None] = list(map(self._rows[True].get, spaced))
        if last:
            rows.append(self._rows[False].get(last))
        return rows

    def _sum_rows(self, rows: list[int] | tuple[int, ...]) -> tuple[np.ndarray, int]:
        return self._log_probs[list(rows)].sum(axis=0, dtype=np.float64), len(rows)


def _word_rows(word: str, spaced: bool) -> tuple[int, ...]:
    """The profile rows of one normalised word's n-grams, as langdetect's `NGram` emits them from the space before
    it to the space after it (``spaced``; the text's last word has none): at each character the 1-gram (not a
    space), then the 2- and 3-gram ending there, none while two capitals in a row (an acronym)."""
    rows = _profiles().rows
    grams = " " + word + (" " if spaced else "")
    found: list[int] = []
    for end in range(1, len(grams)):
        char = grams[end]
        if char.isupper() and grams[end - 1].isupper():
            continue
        for gram in (
            char if char != " " else None,
            grams[end - 1 : end + 1],
            grams[end - 2 : end + 1] if end > 1 else None,
        ):
            row = rows.get(gram) if gram else None
            if row is not None:
                found.append(row)
    return tuple(found)


@functools.cache
def _profiles() -> _Profiles:
    """This process's profiles (loaded once, about 1.5 s and 20 MB)."""
    factory = DetectorFactory()
    factory.load_profile(PROFILES_DIRECTORY)
    grams = factory.word_lang_prob_map
    probs = np.asarray(list(grams.values()), dtype=np.float64)
    log_probs = np.log(probs + _UNSEEN_NGRAM).astype(np.float32)
    columns = {lang: i for i, lang in enumerate(factory.langlist)}
    return _Profiles({gram: i for i, gram in enumerate(grams)}, columns, log_probs)


@functools.cache
def _script_scores(script: str) -> _ScriptScores:
    """This process's word sums for ``script``'s languages (`SHARED_SCRIPT_LANGUAGES` order), over a contiguous
    copy of their profile columns."""
    profiles = _profiles()
    columns = [profiles.columns[lang] for lang in SHARED_SCRIPT_LANGUAGES[script]]
    return _ScriptScores(np.ascontiguousarray(profiles.log_probs[:, columns]))
