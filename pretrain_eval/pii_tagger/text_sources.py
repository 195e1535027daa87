"""Real sentences for the tagger's training templates, read from plain text, gzip and troff (manual page) files.

Manual pages are the largest body of translated prose on a Linux system (German, French, Japanese, Chinese), so
their markup is stripped here; everything else is read as UTF-8 text. Each sentence is assigned a language
cheaply (script for ja/zh, stop-word votes for en/de/fr) and kept only when that is unambiguous.
"""

from __future__ import annotations

import gzip
import re
import sysconfig
import unicodedata
import zlib
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

from pretrain_core import storage

LANGUAGES = ("en", "de", "fr", "zh", "ja")
DATA_DIR = Path(__file__).resolve().parents[2] / "data"
DEMO_DIR = Path(str(resources.files("pretrain_core").joinpath("data", "demo")))
_STOPWORDS = {
    "en": {"the", "and", "is", "of", "to", "in", "that", "you", "it", "for", "this", "with", "are", "not", "be"},
    "de": {"der", "die", "das", "und", "ist", "nicht", "sie", "ein", "eine", "zu", "mit", "den", "auf", "für", "von"},
    "fr": {"le", "la", "les", "et", "est", "pas", "vous", "une", "des", "du", "pour", "dans", "que", "qui", "sur"},
}
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-ZÀ-Ý])|(?<=[。！？])")
_HAS_KANA = re.compile(r"[\u3040-\u30ff]")
_HAS_HAN = re.compile(r"[\u4e00-\u9fff]")
_CJK_END = re.compile(r"[\u3000-\u30ff\u4e00-\u9fff\uff00-\uffef]$")
_CJK_START = re.compile(r"^[\u3000-\u30ff\u4e00-\u9fff\uff00-\uffef]")
_WORD = re.compile(r"[^\W\d_]+")

# groff special characters seen in translated manual pages: accents as \(<accent><letter>, the rest by name.
_TROFF_ACCENTS = {"'": "\u0301", "`": "\u0300", "^": "\u0302", ":": "\u0308", ",": "\u0327", "~": "\u0303"}
_TROFF_NAMED = {
    "aq": "'", "bu": "•", "co": "©", "en": "–", "em": "—", "hy": "-", "lq": "“", "rq": "”", "Fo": "«", "Fc": "»",
    "oe": "œ", "OE": "Œ", "ss": "ß", "at": "@", "de": "°", "rs": "\\", "cq": "’", "oq": "‘", "dq": '"',
}  # fmt: skip
_TROFF_SPECIAL = re.compile(r"\\(?:\((..)|\[([^\]]{1,8})\])")
_TROFF_ESCAPE = re.compile(r"\\(?:f(?:\(..|\[[^\]]*\]|.)|\*(?:\(..|\[[^\]]*\]|.)|s[+-]?\d+|[&|^%]|[-e ])")
_TROFF_BREAKS = {"PP", "P", "LP", "SH", "SS", "TP", "IP", "HP", "sp", "RS", "RE", "br"}
# Requests whose arguments are running text in another font: .B/.I words, .BR/.IR alternating fonts (no spaces).
_TROFF_FONT_REQUESTS = {"B", "I", "SM", "BR", "RB", "IR", "RI", "BI", "IB"}
_TROFF_PLAIN = {"\\-": "-", "\\e": "\\", "\\ ": " "}


def resolve_pattern(pattern: str) -> list[str]:
    """Files matching a glob pattern ('{stdlib}', '{data}' and '{demo}' expanded), sorted."""
    expanded = pattern.replace("{stdlib}", sysconfig.get_paths()["stdlib"]).replace("{data}", str(DATA_DIR))
    expanded = expanded.replace("{demo}", str(DEMO_DIR))
    fs, path = storage.filesystem(expanded)
    protocol = expanded.split("://", 1)[0] + "://" if "://" in expanded else ""
    return sorted(p if not protocol or p.startswith(protocol) else protocol + p for p in fs.glob(path))


def read_text(url: str) -> str | None:
    """A file's prose: gunzipped, troff markup removed; None for binary or non-UTF-8 files."""
    data = storage.read_bytes(url)
    if url.endswith(".gz"):
        data = gzip.decompress(data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return troff_to_text(text) if re.search(r"^\.(?:TH|SH|PP)\b", text, re.MULTILINE) else text


def troff_to_text(source: str) -> str:
    """Running text of a manual page: request lines dropped, font and character escapes resolved."""
    lines: list[str] = []
    for raw in source.splitlines():
        line = raw
        if raw.startswith((".", "'")):
            request, _, arguments = raw[1:].partition(" ")
            if request in _TROFF_BREAKS:
                lines.append("")
            if request not in _TROFF_FONT_REQUESTS:
                continue
            glue = " " if len(request) == 1 or request == "SM" else ""
            line = glue.join(arguments.replace('"', " ").split())
        lines.append(_TROFF_ESCAPE.sub(_plain_escape, _TROFF_SPECIAL.sub(_special_char, line)))
    return "\n".join(lines)


def _special_char(match: re.Match[str]) -> str:
    name = match.group(1) or match.group(2)
    if len(name) == 2 and name[0] in _TROFF_ACCENTS:
        return unicodedata.normalize("NFC", name[1] + _TROFF_ACCENTS[name[0]])
    return _TROFF_NAMED.get(name, "")


def _plain_escape(match: re.Match[str]) -> str:
    return _TROFF_PLAIN.get(match.group(), "")


def load_sentences(patterns: list[str], per_pattern: int) -> dict[str, list[str]]:
    """Real sentences per language (en, de, fr, zh, ja), deduplicated and sorted.

    Files of each pattern are read in a fixed hash order until the pattern has given `per_pattern` sentences,
    which bounds fit time on large sources (thousands of manual pages) while sampling across all of them.
    """
    by_lang: dict[str, set[str]] = {lang: set() for lang in LANGUAGES}
    for pattern in patterns:
        taken = 0
        for url in sorted(resolve_pattern(pattern), key=lambda u: (zlib.crc32(u.encode()), u)):
            if taken >= per_pattern:
                break
            for sentence in sentences_of(read_text(url) or ""):
                lang = sentence_language(sentence)
                if lang is not None and sentence not in by_lang[lang]:
                    by_lang[lang].add(sentence)
                    taken += 1
    return {lang: sorted(found) for lang, found in by_lang.items()}


def sentences_of(text: str) -> Iterator[str]:
    """Prose sentences: paragraphs re-joined across hard line breaks, then split at sentence ends."""
    for paragraph in re.split(r"\n\s*\n", text):
        joined = ""
        for raw in paragraph.splitlines():
            line = raw.strip()
            if line:
                glue = "" if _CJK_END.search(joined) and _CJK_START.search(line) else " "
                joined = f"{joined}{glue}{line}" if joined else line
        for piece in _SENTENCE_END.split(joined):
            sentence = piece.strip()
            if _prose_like(sentence):
                yield sentence


def _prose_like(sentence: str) -> bool:
    """Running text, not a heading, a command listing or a row of symbols."""
    if not 12 <= len(sentence) <= 300:
        return False
    letters = [c for c in sentence if c.isalpha()]
    if len(letters) < 0.6 * len(sentence) * (0.5 if _HAS_HAN.search(sentence) else 1.0):
        return False
    return sum(c.isupper() for c in letters) <= 0.3 * len(letters)


def sentence_language(sentence: str) -> str | None:
    """ja if it has kana, zh if Han characters, else en/de/fr by stop-word vote; None when unsure."""
    if _HAS_KANA.search(sentence):
        return "ja"
    if len(_HAS_HAN.findall(sentence)) >= 4:
        return "zh"
    words = [w.lower() for w in _WORD.findall(sentence)]
    votes = sorted(((sum(w in stop for w in words), lang) for lang, stop in _STOPWORDS.items()), reverse=True)
    (best, lang), (second, _) = votes[0], votes[1]
    return lang if best >= 2 and best > second else None
