#!/usr/bin/env python3
r"""Build the labelled quality set in data/labelled/quality/, and the quality stage's shipped default reference in
pretrain_core/data/quality_reference/, from real text the repository ships: installed Debian files recorded once into
data/reference/quality-sources/sources.tar.xz (scripts/source_snapshot.py), the demo corpus and data/reference.

The set measures whether the pipeline's quality judgement (clean-stage rules, then the perplexity stage) puts real
text above realistic low-quality text. Every item is made from real text:

- good prose: paragraphs of the Debian Administrator's Handbook (7 locales), the Debian FAQ (6), and from
  pretrain_core/data/demo the manual pages (7 languages), the Python documentation, the Bible (en, es), classical
  Chinese fortunes and the Jargon File; from data/reference Vim's tutor and the licence texts; good code: Python's
  standard library, C headers and examples, npm's JavaScript. - bad prose, each made from real text: word salad (a real
  chunk's words shuffled within each line), repeated lines, keyword stuffing (a real chunk plus lists of its page's own
  frequent words), navigation and cookie boilerplate (real localised section titles and navigation labels, plus
  consent/footer lines), mojibake that ftfy cannot repair (real chunks through a wrong legacy codec), machine templates
  (apt/dpkg transcripts from the system's own gettext catalogues, filled with real installed packages) and tables of
  bare numbers (real numbers from CPython's test data and the dpkg database under a real localised heading). - bad code:
  real files minified, obfuscated (identifiers renamed, comments dropped, layout kept) and generated (real generated
  modules such as codec tables, plus bin2c / base64 embeddings of real binary files).

Reference text (what the quality models are fitted on) comes only from pages and files that no eval item comes
from: every page (all translations of a handbook, FAQ or manual page together), Bible chapter, fortune page,
Jargon group and code file is assigned by a keyed SHA-1 rank to the reference side or the eval side; Vim's tutor
and the licences are eval-only sources the reference never sees; paragraphs with a line that another page also
has (a source's own boilerplate, such as the translation notice of every translated manual page) are left out.

Determinism: every listing is sorted, every choice is a keyed SHA-1 rank or a `random.Random` seeded from one,
gzip headers carry no time or name. Same inputs (package versions) give byte-identical files; `--check`
rebuilds into a temporary directory and compares.

    python scripts/build_labelled_quality.py            # writes data/labelled/quality/ and the shipped reference
    python scripts/build_labelled_quality.py --check    # rebuilds elsewhere and compares bytes
    python scripts/build_labelled_quality.py --record-sources  # reads the installed packages, records the archive

Debian packages recorded (besides the repo's pretrain_core/data/demo and data/reference): debian-handbook,
debian-faq{,-de,-fr,-ja,-ru,-zh-cn}, libpython3.11-stdlib,
libpython3.11-testsuite, python3-protobuf, libc6-dev and other -dev headers, zlib1g-dev, vim-runtime,
libstemmer0d, nodejs/npm (for npm's JavaScript), apt, dpkg and the locales' gettext catalogues (apt, dpkg,
libapt-pkg6.0), hicolor icons. Python: ftfy (the set keeps only mojibake ftfy cannot repair).
"""

from __future__ import annotations

import base64
import difflib
import gettext
import gzip
import hashlib
import html.parser
import io
import json
import random
import re
import sys
import tokenize
import zlib
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import ftfy
from rebuild import build_or_check, gzip_jsonl  # scripts/rebuild.py: scripts/ is on sys.path when run
from source_snapshot import SourceSnapshot

REPO = Path(__file__).resolve().parent.parent
LABELLED_DIR = Path("data/labelled/quality")  # the eval items and README, relative to --out (the repository)
SHIPPED_REFERENCE_DIR = Path("pretrain_core/data/quality_reference")  # the default quality reference (package data)
SEED = "pretrain-labelled-quality-v1"

LANGS = ("en", "de", "fr", "es", "ru", "ja", "zh")
CJK = ("ja", "zh")
PROSE_KINDS = (
    "word_salad",
    "repeated_lines",
    "keyword_stuffing",
    "boilerplate",
    "mojibake",
    "machine_template",
    "number_table",
)
CODE_LANGS = ("python", "c", "javascript")
CODE_KINDS = ("minified", "obfuscated", "generated")
GOOD_PER_LANG = 80
BAD_PER_KIND = 12  # per language (prose) or per programming language (code)
GOOD_CODE_PER_LANG = 40
REFERENCE_CHARS = {"en": 320_000, "de": 260_000, "fr": 260_000, "es": 260_000, "ru": 260_000, "ja": 150_000}
REFERENCE_CHARS["zh"] = 150_000
REFERENCE_CODE_CHARS = 260_000  # per programming language
CODE_ITEM_CHARS = 5000
REFERENCE_SHARE = 0.5  # of the pages of each shared source

# The installed files read, recorded once into data/reference/quality-sources (its README: packages, licences);
# paths below are members of that archive, relative to the root of the machine that recorded it.
SOURCES = SourceSnapshot(REPO / "data/reference/quality-sources/sources.tar.xz", ("usr/", "var/lib/dpkg/"))
HANDBOOK = "usr/share/doc/debian-handbook/html"
FAQ = "usr/share/doc/debian/FAQ"
STDLIB = "usr/lib/python3.11"
DEMO = REPO / "pretrain_core" / "data" / "demo"
REFERENCE_DIR = REPO / "data" / "reference"
LOCALES = {"en": "en-US", "de": "de-DE", "fr": "fr-FR", "es": "es-ES", "ru": "ru-RU", "ja": "ja-JP", "zh": "zh-CN"}
FAQ_DIRS = {"de": "de", "fr": "fr", "ru": "ru", "ja": "ja", "zh": "zh-cn"}
GETTEXT_LOCALES = {"de": "de", "fr": "fr", "es": "es", "ru": "ru", "ja": "ja", "zh": "zh_CN"}
VIM_TUTORS = {"en": "tutor.utf-8", "de": "tutor.de.utf-8", "fr": "tutor.fr.utf-8", "ja": "tutor.ja.utf-8"}
VIM_TUTORS["zh"] = "tutor.zh_cn.utf-8"

# Source weights: how evenly good items and corruption inputs are spread over a language's sources.
SOURCE_WEIGHTS = {
    "handbook": 3,
    "faq": 2,
    "manpages": 2,
    "python_docs": 2,
    "bible": 2,
    "fortunes": 2,
    "jargon": 2,
    "vim_tutor": 1,
    "licences": 1,
}

HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
KANA = "\u3040-\u30ff"
CJK_RUN = re.compile(f"[{HAN}{KANA}]+")
LETTER = re.compile(r"[^\W\d_]")
# Function words used only to confirm that a translated paragraph is in its language (not left in English).
FUNCTION_WORDS = {
    "en": {"the", "and", "of", "to", "is", "in", "that", "for", "with", "are", "this", "be"},
    "de": {"der", "die", "das", "und", "ist", "nicht", "mit", "von", "zu", "den", "sich", "ein", "eine", "für"},
    "fr": {"le", "la", "les", "des", "et", "est", "une", "un", "du", "pour", "dans", "que", "qui", "pas"},
    "es": {"el", "la", "los", "las", "de", "y", "que", "en", "un", "una", "es", "por", "para", "con"},
}


# -- shared helpers -----------------------------------------------------------------------------------------------


def rank(key: str) -> str:
    """A stable pseudo-random order key: choosing by it keeps a choice when unrelated inputs change."""
    return hashlib.sha1(f"{SEED}:{key}".encode()).hexdigest()


def rng_for(key: str) -> random.Random:
    return random.Random(int(rank(key)[:16], 16))


def is_reference(key: str) -> bool:
    return int(rank(f"split:{key}")[:8], 16) < REFERENCE_SHARE * 0x1_0000_0000


def squash(text: str) -> str:
    return " ".join(text.split())


def letter_share(text: str) -> float:
    return len(LETTER.findall(text)) / max(len(text), 1)


def in_language(text: str, lang: str) -> bool:
    """Whether a paragraph is written in `lang` (translations often leave paragraphs in English)."""
    letters = LETTER.findall(text)
    if not letters:
        return False
    cjk = sum(map(len, CJK_RUN.findall(text)))
    kana = len(re.findall(f"[{KANA}]", text))
    if lang == "ja":
        return cjk > 0.4 * len(letters) and kana > 0.1 * cjk
    if lang == "zh":
        return cjk > 0.4 * len(letters) and kana == 0
    if lang == "ru":
        return len(re.findall("[\u0400-\u04ff]", text)) > 0.6 * len(letters)
    if cjk:
        return False
    words = re.findall(r"[^\W\d_]+", text.lower())
    own = sum(w in FUNCTION_WORDS[lang] for w in words)
    english = sum(w in FUNCTION_WORDS["en"] for w in words)
    return own >= 3 and (lang == "en" or own > 2 * english)


def read_jsonl(path: Path) -> list[dict[str, str]]:
    if path.suffix == ".zst":
        import zstandard

        raw = zstandard.ZstdDecompressor().stream_reader(path.read_bytes()).read().decode()
    else:
        raw = gzip.decompress(path.read_bytes()).decode()
    return [json.loads(line) for line in raw.splitlines() if line.strip()]


def cut_at_line(text: str, limit: int) -> str:
    """At most `limit` characters, ending at a line break when the text is longer."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    return head[: head.rfind("\n")] if "\n" in head else head


# -- good prose: pages of real text -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Page:
    """A unit of the reference/eval split: all its chunks go to one side. `key` is shared by translations."""

    source: str
    domain: str
    lang: str
    key: str
    paragraphs: tuple[str, ...]
    eval_only: bool = False


@dataclass
class Localised:
    """Real localised strings per language that the boilerplate and table kinds are assembled from."""

    titles: dict[str, list[str]] = field(default_factory=dict)
    navigation: dict[str, list[str]] = field(default_factory=dict)


class DocBookPage(html.parser.HTMLParser):
    """Paragraph text (`div.para` in the handbook, `p` in the FAQ), headings and navigation labels of a page."""

    def __init__(self, paragraph_tag: str) -> None:
        super().__init__(convert_charrefs=True)
        self.paragraph_tag = paragraph_tag
        self.paragraphs: list[str] = []
        self.titles: list[str] = []
        self.navigation: list[str] = []
        self._depth = 0
        self._buffer: list[str] = []
        self._title: list[str] | None = None
        self._nav_label: list[str] | None = None
        self._in_docnav = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = (dict(attrs).get("class") or "").split()
        if self.paragraph_tag == "div.para":
            opens = tag == "div" and (self._depth > 0 or "para" in classes)
        else:
            opens = tag == "p"
        if opens:
            self._depth += 1
        if tag in ("h1", "h2", "h3") and "title" in classes:
            self._title = []
        if tag == "strong" and self._nav_label is None and self._in_docnav:
            self._nav_label = []
        if tag == "ul" and "docnav" in classes:
            self._in_docnav = True

    def handle_endtag(self, tag: str) -> None:
        closes = tag == ("div" if self.paragraph_tag == "div.para" else "p")
        if closes and self._depth:
            self._depth -= 1
            if not self._depth:
                self.paragraphs.append(squash("".join(self._buffer)))
                self._buffer = []
        if tag in ("h1", "h2", "h3") and self._title is not None:
            self.titles.append(squash("".join(self._title)))
            self._title = None
        if tag == "strong" and self._nav_label is not None:
            self.navigation.append(squash("".join(self._nav_label)))
            self._nav_label = None
        if tag == "ul":
            self._in_docnav = False

    def handle_data(self, data: str) -> None:
        if self._depth:
            self._buffer.append(data)
        if self._title is not None:
            self._title.append(data)
        if self._nav_label is not None:
            self._nav_label.append(data)


def parse_docbook(path: Path, paragraph_tag: str) -> DocBookPage:
    parser = DocBookPage(paragraph_tag)
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def min_chars(lang: str) -> int:
    return 40 if lang in CJK else 120


def keep_paragraph(text: str, lang: str, english: str | None) -> bool:
    """Real prose of the page's language: long enough, mostly letters, translated (not the English original)."""
    return (
        len(text) >= min_chars(lang)
        and letter_share(text) >= (0.45 if lang in CJK else 0.6)
        and text != english
        and in_language(text, lang)
    )


def handbook_pages(localised: Localised) -> list[Page]:
    english = {p.name: parse_docbook(p, "div.para") for p in installed(f"{HANDBOOK}/en-US", "*.html")}
    pages: list[Page] = []
    for lang, locale in LOCALES.items():
        for path in installed(f"{HANDBOOK}/{locale}", "*.html"):
            parsed = english[path.name] if lang == "en" else parse_docbook(path, "div.para")
            originals = english[path.name].paragraphs if lang != "en" else [None] * len(parsed.paragraphs)
            if len(originals) != len(parsed.paragraphs):
                continue
            kept = tuple(p for p, e in zip(parsed.paragraphs, originals, strict=True) if keep_paragraph(p, lang, e))
            english_titles = set(english[path.name].titles) if lang != "en" else set()
            localised.titles.setdefault(lang, []).extend(
                t for t in parsed.titles if t not in english_titles and in_language_title(t, lang)
            )
            localised.navigation.setdefault(lang, []).extend(parsed.navigation)
            if kept:
                pages.append(Page("handbook", "specialist", lang, f"handbook/{path.stem}", kept))
    return pages


def in_language_title(title: str, lang: str) -> bool:
    """Titles are too short for function words: ru/ja/zh need their script, other titles only a letter."""
    if lang == "ru":
        return bool(re.search("[\u0400-\u04ff]", title))
    if lang == "ja":
        return bool(re.search(f"[{KANA}]", title))
    if lang == "zh":
        return bool(CJK_RUN.search(title)) and not re.search(f"[{KANA}]", title)
    return bool(LETTER.search(title))


def faq_pages(localised: Localised) -> list[Page]:
    pages: list[Page] = []
    for lang in LANGS:
        if lang == "en":
            files = installed(FAQ, "*.en.html")
        elif lang in FAQ_DIRS:
            files = installed(f"{FAQ}/{FAQ_DIRS[lang]}", "*.html")
        else:
            continue
        for path in files:
            chapter = path.name.split(".")[0]
            if chapter == "index":
                continue
            parsed = parse_docbook(path, "p")
            kept = tuple(p for p in parsed.paragraphs if keep_paragraph(p, lang, None))
            localised.titles.setdefault(lang, []).extend(t for t in parsed.titles if in_language_title(t, lang))
            if kept:
                pages.append(Page("faq", "general", lang, f"faq/{chapter}", kept))
    return pages


def demo_pages() -> list[Page]:
    """Bible chapters (en, es) and fortune pages (zh) one page each; Jargon entries in groups of eight."""
    pages: list[Page] = []
    for source, file, lang in (
        ("bible", "bible_web_en.jsonl.gz", "en"),
        ("bible", "bible_rv1909_es.jsonl.gz", "es"),
        ("fortunes", "fortunes_zh.jsonl.gz", "zh"),
    ):
        for doc in read_jsonl(DEMO / "general" / file):
            body = doc["text"].split("\n\n", 1)[-1] if source == "bible" else doc["text"]
            lines = tuple(line.strip() for line in body.split("\n") if len(line.strip()) >= 2)
            if lines:
                pages.append(Page(source, "general", lang, f"{source}/{lang}/{doc['id']}", lines))
    entries = read_jsonl(DEMO / "general" / "jargon_en.jsonl.zst")
    glossary = [e for e in entries if "/html/" in e.get("url", "") or "jargon" in e["id"]]
    for start in range(0, len(glossary), 8):
        group = glossary[start : start + 8]
        paragraphs = tuple(squash(e["text"]) for e in group if len(e["text"]) >= 80)
        if paragraphs:
            pages.append(Page("jargon", "general", "en", f"jargon/{start // 8:04d}", paragraphs))
    return pages


def manpage_pages() -> list[Page]:
    """The demo corpus's rendered manual pages (7 languages), one page per file, blocks with their layout kept;
    translations of a page share its key."""
    pages: list[Page] = []
    for folder in sorted((DEMO / "text" / "manpages").iterdir()):
        lang = "zh" if folder.name == "zh_CN" else folder.name
        for path in sorted(folder.rglob("*.txt")):
            paragraphs = tuple(
                b
                for b in blocks(path.read_text(encoding="utf-8"))
                if len(b) >= min_chars(lang) and letter_share(b) >= 0.5 and in_language(squash(b), lang)
            )
            if paragraphs:
                pages.append(Page("manpages", "specialist", lang, f"manpages/{path.stem}", paragraphs))
    return pages


def python_docs_pages() -> list[Page]:
    """The demo corpus's Python documentation sources (reStructuredText, markup kept), one page per file."""
    import pyarrow.parquet as pq

    table = pq.read_table(DEMO / "specialist" / "python_docs.parquet", columns=["id", "text"])
    pages: list[Page] = []
    for doc_id, text in zip(table.column("id").to_pylist(), table.column("text").to_pylist(), strict=True):
        paragraphs = tuple(
            b for b in blocks(text) if len(b) >= 120 and letter_share(b) >= 0.6 and in_language(squash(b), "en")
        )
        if paragraphs:
            pages.append(Page("python_docs", "specialist", "en", f"python_docs/{doc_id}", paragraphs))
    return pages


def blocks(text: str) -> list[str]:
    """Blank-line separated blocks with their line breaks kept."""
    return [b.strip("\n") for b in re.split(r"\n\s*\n", text) if b.strip()]


def eval_only_pages() -> list[Page]:
    """Vim's tutor (per lesson) and the licence texts: sources the reference never sees."""
    pages: list[Page] = []
    for lang, name in VIM_TUTORS.items():
        text = (REFERENCE_DIR / "vim-tutor" / name).read_text(encoding="utf-8")
        for number, lesson in enumerate(re.split(r"\n~{20,}\n", text)):
            paragraphs = tuple(b for b in blocks(lesson) if len(b) >= min_chars(lang) and letter_share(b) >= 0.5)
            if paragraphs:
                pages.append(Page("vim_tutor", "specialist", lang, f"vim_tutor/{lang}/{number:02d}", paragraphs, True))
    for path in sorted((REFERENCE_DIR / "licences").iterdir()):
        paragraphs = tuple(squash(b) for b in blocks(path.read_text(encoding="utf-8")) if len(squash(b)) >= 120)
        if paragraphs:
            pages.append(Page("licences", "specialist", "en", f"licences/{path.name}", paragraphs, True))
    return pages


def without_shared_lines(pages: list[Page]) -> list[Page]:
    """Pages less every paragraph holding a line (of 40+ characters) that another page of the same language also
    has: a source's own boilerplate (translation notices of manual pages, repeated backend descriptions), which
    would otherwise put eval text into the reference and is not what a page is about."""
    seen: dict[tuple[str, str], set[str]] = {}
    for page in pages:
        for paragraph in page.paragraphs:
            for line in _long_lines(paragraph):
                seen.setdefault((page.lang, line), set()).add(page.key)
    kept = []
    for page in pages:
        paragraphs = tuple(
            p for p in page.paragraphs if all(len(seen[(page.lang, line)]) == 1 for line in _long_lines(p))
        )
        if paragraphs:
            kept.append(Page(page.source, page.domain, page.lang, page.key, paragraphs, page.eval_only))
    return kept


def _long_lines(paragraph: str) -> set[str]:
    return {line.strip() for line in paragraph.splitlines() if len(line.strip()) >= 40}


def chunk_page(page: Page) -> list[tuple[str, ...]]:
    """Consecutive paragraphs grouped into documents of roughly 500-1,800 characters (200-800 for CJK)."""
    low, high = (200, 800) if page.lang in CJK else (500, 1800)
    chunks: list[tuple[str, ...]] = []
    current: list[str] = []
    size = 0
    for paragraph in page.paragraphs:
        if len(paragraph) > high:
            continue
        if current and size + len(paragraph) > high:
            current, size = [], 0
        current.append(paragraph)
        size += len(paragraph) + 1
        if size >= low:
            chunks.append(tuple(current))
            current, size = [], 0
    return chunks


# -- choosing chunks ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Chunk:
    source: str
    domain: str
    lang: str
    page: str
    lines: tuple[str, ...]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def chunk_pools(pages: Sequence[Page], side: str) -> dict[str, dict[str, list[Chunk]]]:
    """lang -> source -> chunks of that side of the split, in rank order."""
    pools: dict[str, dict[str, list[Chunk]]] = {}
    for page in pages:
        reference = not page.eval_only and is_reference(page.key)
        if reference != (side == "reference"):
            continue
        for lines in chunk_page(page):
            chunk = Chunk(page.source, page.domain, page.lang, page.key, lines)
            pools.setdefault(page.lang, {}).setdefault(page.source, []).append(chunk)
    for by_source in pools.values():
        for source, chunks in by_source.items():
            by_source[source] = sorted(chunks, key=lambda c: rank(f"{c.page}|{c.text}"))
    return pools


def weighted_draw(pools: dict[str, list[Chunk]], count: int, accept: Callable[[Chunk], bool]) -> list[Chunk]:
    """Take `count` chunks, spread over sources by SOURCE_WEIGHTS (a source that runs dry leaves its share to the
    others), removing them from the pools so no chunk is used twice."""
    chosen: list[Chunk] = []
    credit = dict.fromkeys(sorted(pools), 0.0)
    while len(chosen) < count:
        live = [s for s in sorted(pools) if pools[s]]
        if not live:
            raise SystemExit(f"not enough chunks: wanted {count}, got {len(chosen)}")
        total = sum(SOURCE_WEIGHTS[s] for s in live)
        for source in live:
            credit[source] += SOURCE_WEIGHTS[source] / total
        source = max(live, key=lambda s: (credit[s], s))
        credit[source] -= 1.0
        chunk = pools[source].pop(0)
        if accept(chunk):
            chosen.append(chunk)
    return chosen


# -- bad prose made from real text --------------------------------------------------------------------------------


def salad_units(line: str, rng: random.Random) -> list[str]:
    """A line's words; CJK runs (no spaces to split on) cut into pieces of one to three characters."""
    units: list[str] = []
    for token in line.split():
        position = 0
        for match in CJK_RUN.finditer(token):
            if match.start() > position:
                units.append(token[position : match.start()])
            run = match.group()
            while run:
                size = rng.randint(1, 3)
                units.append(run[:size])
                run = run[size:]
            position = match.end()
        if position < len(token):
            units.append(token[position:])
    return units


def word_salad(chunk: Chunk, rng: random.Random) -> str:
    """Every word real and in its own line, the order shuffled: what spam generators produce from real text."""
    joiner = "" if chunk.lang in CJK else " "
    lines = []
    for line in chunk.lines:
        units = salad_units(line, rng)
        rng.shuffle(units)
        lines.append(joiner.join(units))
    return "\n".join(lines)


def repeated_lines(chunk: Chunk, rng: random.Random) -> str:
    """One to three of the chunk's lines (sentences, for one-paragraph chunks) repeated four to ten times each."""
    lines = list(chunk.lines)
    if len(lines) < 3:
        lines = [s for line in lines for s in sentences(line, chunk.lang)]
    picked = rng.sample(lines, min(len(lines), rng.randint(1, 3)))
    out = list(lines)
    for line in picked:
        for _ in range(rng.randint(4, 10)):
            out.insert(rng.randint(0, len(out)), line)
    return "\n".join(out)


def sentences(text: str, lang: str) -> list[str]:
    pattern = r"(?<=[。！？])" if lang in CJK else r"(?<=[.!?])\s+"
    return [s.strip() for s in re.split(pattern, text) if s.strip()]


def page_keywords(page_text: str, lang: str, count: int = 6) -> list[str]:
    """The page's most frequent content words (Han/kana bigrams for CJK): what a keyword stuffer would target."""
    if lang in CJK:
        grams = Counter(run[i : i + 2] for run in CJK_RUN.findall(page_text) for i in range(len(run) - 1))
    else:
        stop = FUNCTION_WORDS.get(lang, set()) | FUNCTION_WORDS["en"]
        words = re.findall(r"[^\W\d_][\w'-]*[^\W\d_]", page_text)
        grams = Counter(w for w in words if len(w) >= 5 and w.lower() not in stop)
    return [word for word, _ in sorted(grams.items(), key=lambda item: (-item[1], item[0]))[:count]]


def keyword_stuffing(chunk: Chunk, keywords: list[str], rng: random.Random) -> str:
    """Two real lines, each followed by lists of the page's keywords in varying combinations, plus a tag line."""
    joiner = "" if chunk.lang in CJK else " "
    separator = rng.choice([", ", " | ", " - ", " · "])
    out: list[str] = []
    for line in chunk.lines[:2]:
        out.append(line)
        for _ in range(rng.randint(1, 3)):
            phrases = [joiner.join(rng.sample(keywords, rng.randint(1, 3))) for _ in range(rng.randint(6, 14))]
            out.append(separator.join(phrases))
    out.append(separator.join([*keywords, joiner.join(keywords[:2]), joiner.join(keywords[1:3])]))
    return "\n".join(out)


# Consent banners and footers, in the wording such banners use in each language (written for this set).
COOKIE_LINES = {
    "en": [
        "We use cookies to give you the best experience on our website.",
        "By continuing to browse the site you agree to our use of cookies.",
        "Accept all",
        "Reject all",
        "Cookie settings",
        "Privacy policy",
        "Terms of use",
        "© 2023 All rights reserved.",
        "Skip to main content",
        "Search",
        "Sign in",
        "Subscribe to our newsletter",
    ],
    "de": [
        "Wir verwenden Cookies, um Ihnen das beste Nutzererlebnis auf unserer Website zu bieten.",
        "Wenn Sie die Website weiter nutzen, stimmen Sie der Verwendung von Cookies zu.",
        "Alle akzeptieren",
        "Alle ablehnen",
        "Cookie-Einstellungen",
        "Datenschutzerklärung",
        "Impressum",
        "© 2023 Alle Rechte vorbehalten.",
        "Zum Inhalt springen",
        "Suche",
        "Anmelden",
        "Newsletter abonnieren",
    ],
    "fr": [
        "Nous utilisons des cookies pour vous offrir la meilleure expérience sur notre site.",
        "En poursuivant votre navigation, vous acceptez l'utilisation des cookies.",
        "Tout accepter",
        "Tout refuser",
        "Paramètres des cookies",
        "Politique de confidentialité",
        "Mentions légales",
        "© 2023 Tous droits réservés.",
        "Aller au contenu",
        "Rechercher",
        "Se connecter",
        "S'abonner à la newsletter",
    ],
    "es": [
        "Utilizamos cookies para ofrecerle la mejor experiencia en nuestro sitio web.",
        "Si continúa navegando, acepta el uso de cookies.",
        "Aceptar todas",
        "Rechazar todas",
        "Configuración de cookies",
        "Política de privacidad",
        "Aviso legal",
        "© 2023 Todos los derechos reservados.",
        "Ir al contenido",
        "Buscar",
        "Iniciar sesión",
        "Suscríbase a nuestro boletín",
    ],
    "ru": [
        "Мы используем файлы cookie, чтобы сделать работу с сайтом удобнее.",
        "Продолжая пользоваться сайтом, вы соглашаетесь с использованием файлов cookie.",
        "Принять все",
        "Отклонить все",
        "Настройки cookie",
        "Политика конфиденциальности",
        "Пользовательское соглашение",
        "© 2023 Все права защищены.",
        "Перейти к содержимому",
        "Поиск",
        "Войти",
        "Подписаться на рассылку",
    ],
    "ja": [
        "当サイトでは、より良いサービスを提供するためにクッキーを使用しています。",
        "サイトの閲覧を続けることで、クッキーの使用に同意したものとみなされます。",
        "すべて同意する",
        "すべて拒否する",
        "クッキー設定",
        "プライバシーポリシー",
        "利用規約",
        "© 2023 無断転載を禁じます。",
        "本文へスキップ",
        "検索",
        "ログイン",
        "メールマガジンに登録",
    ],
    "zh": [
        "本网站使用 Cookie 来为您提供更好的浏览体验。",
        "继续浏览本网站即表示您同意我们使用 Cookie。",
        "全部接受",
        "全部拒绝",
        "Cookie 设置",
        "隐私政策",
        "使用条款",
        "© 2023 版权所有。",
        "跳到主要内容",
        "搜索",
        "登录",
        "订阅我们的新闻简报",
    ],
}


def boilerplate(lang: str, localised: Localised, rng: random.Random) -> str:
    """A page whose extraction kept only its chrome: menus of real section titles, the real localised
    navigation labels of the handbook, a consent banner and a footer, in a shuffled block order."""
    titles = sorted(set(localised.titles[lang]))
    navigation = sorted(set(localised.navigation[lang]))
    cookie = COOKIE_LINES[lang]
    menu = rng.sample(titles, rng.randint(5, 9))
    related = rng.sample(titles, rng.randint(6, 12))
    nav_line = rng.choice([" | ", " › ", "  "]).join(navigation)
    blocks_ = [
        [rng.choice([" | ", "  ", " · "]).join(cookie[8:12])],
        menu,
        [nav_line, rng.choice(related)],
        cookie[:2] + cookie[2:5],
        related,
        [" | ".join(cookie[5:8])],
    ]
    order = [0, *sorted(range(1, 5), key=lambda _: rng.random()), 5]
    return "\n".join(line for i in order for line in blocks_[i])


# Mojibake no repair can undo: text saved in one encoding and read as another (or with lost bytes).
def _per_line(convert: Callable[[str], str]) -> Callable[[str], str]:
    return lambda text: "\n".join(convert(line) for line in text.split("\n"))


def _utf8_as_utf16(line: str) -> str:
    data = line.encode("utf-8")
    return (data + b" " * (len(data) % 2)).decode("utf-16-le", errors="replace")


MOJIBAKE: dict[str, list[tuple[str, Callable[[str], str]]]] = {
    "en": [("utf-8 read as utf-16le", _per_line(_utf8_as_utf16))],
    "de": [
        ("latin-1 read as utf-8", lambda t: t.encode("latin-1", "replace").decode("utf-8", "replace")),
        ("cp850 read as cp1252", lambda t: t.encode("cp850", "replace").decode("cp1252", "replace")),
    ],
    "ru": [
        ("cp1251 read as cp1252", lambda t: t.encode("cp1251", "replace").decode("cp1252", "replace")),
        ("koi8-r read as cp1251", lambda t: t.encode("koi8-r", "replace").decode("cp1251", "replace")),
    ],
    "ja": [
        ("utf-8 read as cp932", lambda t: t.encode("utf-8").decode("cp932", "replace")),
        ("shift_jis read as cp1252", lambda t: t.encode("shift_jis", "replace").decode("cp1252", "replace")),
    ],
    "zh": [
        ("utf-8 read as gbk", lambda t: t.encode("utf-8").decode("gbk", "replace")),
        (
            "gbk read as utf-8, saved as utf-8, read as gbk",
            lambda t: t.encode("gbk", "replace").decode("utf-8", "replace").encode("utf-8").decode("gbk", "replace"),
        ),
    ],
}
MOJIBAKE["fr"] = MOJIBAKE["es"] = MOJIBAKE["de"]


def mojibake(chunk: Chunk, variant: int) -> tuple[str, str] | None:
    """The damaged chunk and the codec story, or None when ftfy repairs it (then it is not low-quality text after
    the clean stage) or the damage is slight: under 8% of words (of characters, for CJK) still wrong after ftfy."""
    name, convert = MOJIBAKE[chunk.lang][variant % len(MOJIBAKE[chunk.lang])]
    damaged = convert(chunk.text)
    repaired = ftfy.fix_text(damaged)
    units: Callable[[str], list[str]] = list if chunk.lang in CJK else str.split
    matcher = difflib.SequenceMatcher(None, units(chunk.text), units(repaired), autojunk=False)
    if matcher.ratio() > 0.92:
        return None
    return damaged, name


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    arch: str
    size_kb: int


def installed_packages() -> list[Package]:
    packages = []
    for stanza in SOURCES.path("var/lib/dpkg/status").read_text(encoding="utf-8").split("\n\n"):
        fields = dict(re.findall(r"^([A-Za-z-]+): (.*)$", stanza, flags=re.M))
        if "Package" in fields and "Version" in fields and fields.get("Installed-Size", "").isdigit():
            packages.append(
                Package(
                    fields["Package"],
                    fields["Version"],
                    fields.get("Architecture", "all"),
                    int(fields["Installed-Size"]),
                )
            )
    return sorted(packages, key=lambda p: p.name)


class Catalogue:
    """The system's translations of apt and dpkg messages; untranslated messages stay English, as apt prints them."""

    def __init__(self, lang: str) -> None:
        self.messages: dict[str, str] = {}
        if lang == "en":
            return
        for domain in ("apt", "dpkg", "libapt-pkg6.0"):
            path = SOURCES.path(f"usr/share/locale/{GETTEXT_LOCALES[lang]}/LC_MESSAGES/{domain}.mo")
            with path.open("rb") as handle:
                catalog = gettext.GNUTranslations(handle)._catalog  # type: ignore[attr-defined]
            self.messages.update({k: v for k, v in catalog.items() if isinstance(k, str) and k})

    def __call__(self, msgid: str, *args: object) -> str:
        template = self.messages.get(msgid, self.messages.get(msgid + "\n", msgid))
        values = list(args)
        counter = iter(range(len(values)))

        def fill(match: re.Match[str]) -> str:
            index = int(match.group(1)) - 1 if match.group(1) else next(counter)
            return str(values[index])

        return re.sub(r"%(?:(\d+)\$)?l?[sud]", fill, template).rstrip("\n")


def machine_template(lang: str, packages: list[Package], rng: random.Random) -> str:
    """An apt install transcript in the language, from the system's own message catalogues, filled with real
    installed packages: the machine output that pastes and scraped logs put into web text."""
    say = Catalogue(lang)
    chosen = sorted(rng.sample(packages, rng.randint(5, 12)), key=lambda p: p.name)
    total = sum(p.size_kb for p in chosen)
    lines = [
        f"{say('Reading package lists')}... {say('done')}",
        f"{say('Building dependency tree')}... {say('done')}",
        f"{say('Reading state information')}... {say('done')}",
        say("The following NEW packages will be installed:"),
        "  " + " ".join(p.name for p in chosen),
        say("%lu upgraded, %lu newly installed, ", 0, len(chosen))
        + say("%lu to remove and %lu not upgraded.\n", 0, rng.randint(0, 40)),
        say("Need to get %sB of archives.\n", f"{total * 0.31:,.0f} k"),
        say("After this operation, %sB of additional disk space will be used.\n", f"{total:,} k"),
    ]
    for number, package in enumerate(chosen, 1):
        where = (
            f"http://deb.debian.org/debian bookworm/main {package.arch} {package.name} {package.arch} {package.version}"
        )
        lines.append(f"{say('Get:%lu %s', number, where)} [{max(package.size_kb // 3, 1)} kB]")
    lines.append(
        say(
            "Fetched %sB in %s (%sB/s)\n",
            f"{total * 0.31:,.0f} k",
            f"{rng.randint(1, 9)}s",
            f"{rng.randint(900, 9000)} k",
        )
    )
    for package in chosen:
        deb = f".../{package.name}_{package.version}_{package.arch}.deb"
        lines += [
            say("Selecting previously unselected package %s.\n", package.name),
            say("Preparing to unpack %s ...\n", deb),
            say("Unpacking %s (%s) ...\n", package.name, package.version),
        ]
    lines += [say("Setting up %s (%s) ...\n", p.name, p.version) for p in chosen]
    lines.append(say("Processing triggers for %s (%s) ...\n", "man-db", "2.11.2-2"))
    return "\n".join(lines)


def real_numbers() -> list[str]:
    """Numbers as they occur in real data: CPython's math test vectors and the sizes in the dpkg database."""
    numbers: list[str] = []
    for name in ("math_testcases.txt", "cmath_testcases.txt", "floating_points.txt"):
        for line in SOURCES.path(f"{STDLIB}/test/{name}").read_text(encoding="utf-8").splitlines():
            if line.startswith(("--", "#")):
                continue
            numbers += [n for n in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", line) if len(n) <= 12]
    numbers += [str(p.size_kb) for p in installed_packages()]
    return numbers


def number_table(lang: str, localised: Localised, numbers: list[str], rng: random.Random) -> str:
    """A real heading over rows of real numbers (locale decimal commas where the language writes them)."""
    heading = rng.choice(sorted(set(localised.titles[lang])))
    columns = rng.randint(3, 8)
    start = rng.randrange(len(numbers) - 400)
    separator = rng.choice(["  ", "\t", " | ", " "])
    rows = []
    for row in range(rng.randint(15, 35)):
        values = numbers[start + row * columns : start + (row + 1) * columns]
        if lang in ("de", "fr", "es", "ru"):
            values = [v.replace(".", ",") for v in values]
        rows.append(separator.join(values))
    return "\n".join([heading, *rows])


# -- code -----------------------------------------------------------------------------------------------------------

GENERATED_MARK = re.compile(r"generated|do not edit", re.I)
CPP_DIRS = ("c++", "llvm", "boost", "qt")  # C++ headers: the set's C is C
CPP_MARK = re.compile(r"\bnamespace\b|\btemplate\s*<|\bclass\s+\w+\s*[:{]|\bpublic:")


def installed(folder: str, pattern: str) -> list[Path]:
    """The installed files in `folder` matching `pattern`, sorted (a listing the source snapshot keeps)."""
    return SOURCES.listing(f"/{folder}/{pattern}", lambda: sorted(SOURCES.path(folder).glob(pattern)))


def code_key(path: Path) -> str:
    """What a code file's rank and side are keyed on: its installed path."""
    return f"code/{SOURCES.name(path)}"


def code_pool(lang: str) -> list[Path]:
    """Hand-written source files of one language (generated ones, by their header, left out)."""
    return SOURCES.listing(f"code_pool/{lang}", lambda: hand_written(lang))


def hand_written(lang: str) -> list[Path]:
    if lang == "python":
        stdlib = SOURCES.path(STDLIB)
        skip = ("test", "idlelib", "encodings", "pydoc_data", "lib2to3", "site-packages", "dist-packages")
        files = [p for p in stdlib.rglob("*.py") if not set(p.relative_to(stdlib).parts[:-1]) & set(skip)]
        files = [p for p in files if not p.name.startswith("_sysconfigdata")]
    elif lang == "c":
        headers = SOURCES.path("usr/include").rglob("*.h")
        files = [p for p in headers if not any(d.startswith(CPP_DIRS) for d in p.parts)]
        files += [p for base in ("usr/share/doc", "usr/share/vim") for p in SOURCES.path(base).rglob("*.c")]
    else:
        files = [p for p in SOURCES.path("usr/lib/node_modules/npm").rglob("*.js") if ".min." not in p.name]
        files += [
            SOURCES.path("usr/share/javascript/jquery/jquery.js"),
            SOURCES.path("usr/share/javascript/underscore/underscore.js"),
        ]
    kept = []
    for path in sorted(set(files)):
        if path.is_symlink() or not 2000 <= path.stat().st_size <= 80_000:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        lines = text.splitlines()
        if "\ufffd" in text or GENERATED_MARK.search("\n".join(lines[:12])) or not lines:
            continue
        if lang == "c" and CPP_MARK.search(text):
            continue
        if sum(map(len, lines)) / len(lines) > 90:  # minified or bundled
            continue
        kept.append(path)
    return kept


_C_WORDS = (
    "auto break case char const continue default do double else enum extern float for goto if inline int "
    "long register restrict return short signed sizeof static struct switch typedef union unsigned void "
    "volatile while define include ifdef ifndef endif elif undef pragma defined NULL bool true false "
    "size_t uint8_t uint16_t uint32_t uint64_t int8_t int16_t int32_t int64_t FILE printf fprintf sprintf "
    "snprintf malloc free memcpy memset strlen strcmp strcpy exit main errno stderr stdout stdin "
    "__attribute__ __extension__"
)
C_KEYWORDS = frozenset(_C_WORDS.split())
_JS_WORDS = (
    "break case catch class const continue debugger default delete do else export extends finally for "
    "function if import in instanceof let new return super switch this throw try typeof var void while "
    "with yield async await of static get set null undefined true false require module exports console "
    "process Object Array String Number Boolean Promise Error Map Set JSON Math Date RegExp Symbol window "
    "document arguments from as prototype length"
)
JS_KEYWORDS = frozenset(_JS_WORDS.split())
C_LIKE_TOKEN = re.compile(
    r"""(?P<comment>//[^\n]*|/\*.*?\*/)
    |(?P<string>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`)
    |(?P<name>[A-Za-z_$][A-Za-z0-9_$]*)
    |(?P<number>\d[\w.]*)
    |(?P<newline>\n)
    |(?P<space>[ \t\r\f\v]+)
    |(?P<other>.)""",
    re.S | re.X,
)


def c_like_tokens(text: str) -> Iterator[tuple[str, str]]:
    for match in C_LIKE_TOKEN.finditer(text):
        kind = match.lastgroup or "other"
        yield kind, match.group()


def new_names(style: str, rng: random.Random) -> Callable[[str], str]:
    """A consistent renaming in an obfuscator's style: _0x3fa2c (JavaScript), Il1lI1 (Python), _x4f2a (C)."""
    mapping: dict[str, str] = {}

    def rename(name: str) -> str:
        while name not in mapping:
            if style == "javascript":
                candidate = f"_0x{rng.randrange(0x10000, 0xFFFFFF):x}"
            elif style == "python":
                candidate = rng.choice("Il") + "".join(rng.choice("Il1") for _ in range(rng.randint(5, 9)))
            else:
                candidate = f"_{rng.choice('xyz')}{rng.randrange(0x1000, 0xFFFF):x}"
            if candidate not in mapping.values():
                mapping[name] = candidate
        return mapping[name]

    return rename


def minify_c_like(text: str, lang: str, rng: random.Random) -> str:
    """Comments dropped, whitespace collapsed to what separates words, lines joined (C keeps preprocessor lines)
    and wrapped the way minifiers do: one line, or at 500 or 250 characters."""
    out: list[str] = []
    previous = ""
    at_line_start = True
    in_directive = False
    for kind, value in c_like_tokens(text):
        if kind == "comment":
            continue
        if kind in ("space", "newline"):
            if kind == "newline":
                if in_directive:
                    out.append("\n")
                    previous, in_directive = "", False
                at_line_start = True
            continue
        if lang == "c" and at_line_start and value == "#":
            if out and not out[-1].endswith("\n"):
                out.append("\n")
            in_directive = True
        if previous and (previous[-1].isalnum() or previous[-1] in "_$") and (value[0].isalnum() or value[0] in "_$"):
            out.append(" ")
        elif in_directive and previous and value and previous not in "#":
            out.append(" " if kind == "name" and previous[-1] in ")" else "")
        out.append(value)
        previous, at_line_start = value, False
    joined = "".join(out)
    width = rng.choice([0, 500, 250])
    if not width:
        return joined
    wrapped: list[str] = []
    for line in joined.split("\n"):
        while len(line) > width:
            cut = max(line.rfind(";", 0, width), line.rfind("}", 0, width), line.rfind(",", 0, width))
            cut = cut + 1 if cut > 0 else width
            wrapped.append(line[:cut])
            line = line[cut:]
        wrapped.append(line)
    return "\n".join(wrapped)


def obfuscate_c_like(text: str, lang: str, rng: random.Random) -> str:
    """Identifiers renamed (members after `.`/`->` and library names kept), comments dropped, layout kept."""
    keywords = C_KEYWORDS if lang == "c" else JS_KEYWORDS
    rename = new_names(lang, rng)
    out: list[str] = []
    previous = ""
    for kind, value in c_like_tokens(text):
        if kind == "comment":
            out.append("\n" * value.count("\n"))
            continue
        if kind == "name" and value not in keywords and previous not in (".", ">", "#"):
            value = rename(value)
        out.append(value)
        if kind not in ("space", "newline"):
            previous = value[-1:]
    lines = [line.rstrip() for line in "".join(out).split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")


def python_tokens(text: str) -> list[tokenize.TokenInfo]:
    return list(tokenize.generate_tokens(io.StringIO(text).readline))


def _is_docstring(tokens: list[tokenize.TokenInfo], index: int) -> bool:
    """A string token that is a statement of its own (module, class or function docstring, or a bare string)."""
    if tokens[index].type != tokenize.STRING:
        return False
    before = next((t for t in reversed(tokens[:index]) if t.type not in (tokenize.NL, tokenize.COMMENT)), None)
    after = tokens[index + 1] if index + 1 < len(tokens) else None
    starts_line = before is None or before.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
    return starts_line and after is not None and after.type in (tokenize.NEWLINE, tokenize.ENDMARKER)


def minify_python(text: str, rng: random.Random) -> str:
    """pyminifier's style: comments, docstrings and blank lines gone, one space per indent level, minimal spaces;
    simple statements of a block joined with `;` at random."""
    tokens = python_tokens(text)
    lines: list[str] = []
    depth = 0
    current: list[str] = []
    for index, token in enumerate(tokens):
        if token.type == tokenize.INDENT:
            depth += 1
        elif token.type == tokenize.DEDENT:
            depth -= 1
        elif token.type in (tokenize.COMMENT, tokenize.NL, tokenize.ENDMARKER) or _is_docstring(tokens, index):
            continue
        elif token.type == tokenize.NEWLINE:
            if current:
                line = "".join(current)
                joinable = lines and lines[-1].startswith(" " * depth) and not line.endswith(":")
                same_depth = lines and len(lines[-1]) - len(lines[-1].lstrip(" ")) == depth
                if joinable and same_depth and not lines[-1].endswith(":") and rng.random() < 0.5:
                    lines[-1] += ";" + line
                else:
                    lines.append(" " * depth + line)
            current = []
        else:
            value = token.string
            if (
                current
                and (current[-1][-1:].isalnum() or current[-1][-1:] == "_")
                and (value[:1].isalnum() or value[:1] in "_'\"")
            ):
                current.append(" ")
            current.append(value)
    return "\n".join(lines)


def obfuscate_python(text: str, rng: random.Random) -> str:
    """Names renamed in Python obfuscators' Il1 style (imports, attributes, keywords and builtins kept), comments
    and docstrings dropped (`pass` where a block would be left empty), layout otherwise kept."""
    import builtins
    import keyword

    tokens = python_tokens(text)
    imported = {
        name
        for line in text.splitlines()
        if line.lstrip().startswith(("import ", "from "))
        for name in re.findall(r"[A-Za-z_]\w*", line)
    }
    keep = imported | set(keyword.kwlist) | set(keyword.softkwlist) | set(dir(builtins)) | {"self", "cls"}
    rename = new_names("python", rng)

    def renamable(token: tokenize.TokenInfo, previous: str) -> bool:
        name = token.string
        return token.type == tokenize.NAME and name not in keep and previous != "." and not name.startswith("__")

    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))

    def offset(position: tuple[int, int]) -> int:
        return starts[position[0] - 1] + position[1]

    edits: list[tuple[int, int, str]] = []
    previous = ""
    for index, token in enumerate(tokens):
        if token.type == tokenize.COMMENT:
            edits.append((offset(token.start), offset(token.end), ""))
        elif token.type == tokenize.STRING and _is_docstring(tokens, index):
            edits.append((offset(token.start), offset(token.end), "pass" if token.start[1] else ""))
        elif renamable(token, previous):
            edits.append((offset(token.start), offset(token.end), rename(token.string)))
        if token.type not in (tokenize.NL, tokenize.COMMENT):
            previous = token.string
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    lines = [line.rstrip() for line in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")


def binary_sources() -> list[Path]:
    return SOURCES.listing("binary_sources", binary_files)


def binary_files() -> list[Path]:
    files = sorted(SOURCES.path("usr/share/icons/hicolor").rglob("*.png")) + sorted(
        SOURCES.path("usr/share/locale/de/LC_MESSAGES").glob("*.mo")
    )
    return [p for p in files if 1500 <= p.stat().st_size <= 60_000 and not p.is_symlink()]


def real_generated_python() -> list[Path]:
    """Generated modules that ship with Python and protobuf: codec tables, protoc output, Sphinx's topic dump."""
    return SOURCES.listing("generated_python", generated_modules)


def generated_modules() -> list[Path]:
    encodings = SOURCES.path(f"{STDLIB}/encodings")
    files = sorted(encodings.glob("cp*.py")) + sorted(encodings.glob("mac_*.py"))
    files += sorted(SOURCES.path("usr/lib/python3/dist-packages/google/protobuf").rglob("*_pb2.py"))
    files += [SOURCES.path(f"{STDLIB}/pydoc_data/topics.py")]
    return [p for p in files if p.stat().st_size >= 3000]


def generated_code(lang: str, number: int, binaries: list[Path]) -> tuple[str, str]:
    """Data dressed as code, as generators emit it: a real generated module (Python), or a real binary file as a
    bin2c byte array, a base64 string or a number array."""
    if lang == "python" and number % 2 == 0:
        files = real_generated_python()
        path = files[int(rank(f"generated/{number}")[:8], 16) % len(files)]
        return path.read_text(encoding="utf-8"), f"real generated module {path.name}"
    path = binaries[int(rank(f"binary/{lang}/{number}")[:8], 16) % len(binaries)]
    data = path.read_bytes()
    stem = re.sub(r"\W", "_", path.stem)
    if lang == "c":
        rows = [", ".join(f"0x{b:02x}" for b in data[i : i + 12]) + "," for i in range(0, len(data), 12)]
        body = "\n".join("    " + row for row in rows)
        text = (
            f"/* {path.name}: generated by bin2c, {len(data)} bytes. */\n#include <stddef.h>\n\n"
            f"static const unsigned char {stem}_data[] = {{\n{body}\n}};\n"
            f"static const size_t {stem}_size = sizeof({stem}_data);\n"
        )
    elif lang == "javascript" and number % 2:
        encoded = base64.b64encode(data).decode()
        lines = [encoded[i : i + 76] for i in range(0, len(encoded), 76)]
        text = (
            f'// {path.name}\nmodule.exports = "data:application/octet-stream;base64," +\n'
            + " +\n".join(f'  "{line}"' for line in lines)
            + ";\n"
        )
    elif lang == "javascript":
        packed = zlib.compress(data, 9)
        rows = [",".join(str(b) for b in packed[i : i + 24]) + "," for i in range(0, len(packed), 24)]
        text = f"/* eslint-disable */\nexport const {stem} = new Uint8Array([\n" + "\n".join(rows) + "\n]);\n"
    else:
        encoded = base64.b64encode(data).decode()
        wrapped = "\n".join(encoded[i : i + 76] for i in range(0, len(encoded), 76))
        text = f'# Embedded {path.name}\nimport base64\n\n{stem.upper()} = base64.b64decode(b"""\n{wrapped}\n""")\n'
    return text, f"{path.name} embedded as data"


# -- assembling the set -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    id: str
    group: str  # prose | code
    lang: str  # ISO 639-1 for prose, programming language for code
    kind: str  # good, or the corruption
    label: int  # 1 good, 0 bad
    domain: str
    source: str
    text: str
    note: str = ""

    def record(self) -> dict[str, object]:
        return {
            "id": self.id,
            "group": self.group,
            "lang": self.lang,
            "kind": self.kind,
            "label": self.label,
            "domain": self.domain,
            "source": self.source,
            "note": self.note,
            "text": self.text,
        }


@dataclass(frozen=True)
class ProseMaterial:
    """What the corruptions of one language are made from."""

    lang: str
    pool: dict[str, list[Chunk]]  # eval-side chunks by source; drawing removes them
    page_text: dict[str, str]  # page key -> the page's text, for its keywords
    localised: Localised
    packages: list[Package]
    numbers: list[str]


def bad_prose(kind: str, n: int, material: ProseMaterial, rng: random.Random) -> tuple[str, str, str]:
    """Text, source and note of the n-th item of one corruption kind."""
    lang = material.lang
    if kind in ("word_salad", "repeated_lines", "keyword_stuffing"):
        needs_lines = kind != "word_salad"
        (chunk,) = weighted_draw(material.pool, 1, lambda c: len(c.lines) >= 2 or not needs_lines)
        if kind == "word_salad":
            return word_salad(chunk, rng), chunk.source, ""
        if kind == "repeated_lines":
            return repeated_lines(chunk, rng), chunk.source, ""
        keywords = page_keywords(material.page_text[chunk.page], lang)
        return keyword_stuffing(chunk, keywords, rng), chunk.source, "keywords: " + ", ".join(keywords)
    if kind == "mojibake":
        results: list[tuple[str, str]] = []

        def damaged(candidate: Chunk) -> bool:
            result = mojibake(candidate, n)
            if result:
                results.append(result)
            return result is not None

        (chunk,) = weighted_draw(material.pool, 1, damaged)
        text, note = results[-1]
        return text, chunk.source, note
    if kind == "boilerplate":
        return boilerplate(lang, material.localised, rng), "handbook+faq titles", ""
    if kind == "machine_template":
        return machine_template(lang, material.packages, rng), "apt/dpkg catalogues", ""
    return number_table(lang, material.localised, material.numbers, rng), "cpython test data+dpkg", ""


def prose_items(pages: list[Page], localised: Localised) -> list[Item]:
    pools = chunk_pools(pages, "eval")
    packages = installed_packages()
    numbers = real_numbers()
    items: list[Item] = []
    for lang in LANGS:
        page_text = {p.key: "\n".join(p.paragraphs) for p in pages if p.lang == lang}
        material = ProseMaterial(lang, pools[lang], page_text, localised, packages, numbers)
        for n, chunk in enumerate(weighted_draw(material.pool, GOOD_PER_LANG, lambda c: True)):
            item_id = f"prose/{lang}/good/{n:03d}"
            items.append(Item(item_id, "prose", lang, "good", 1, chunk.domain, chunk.source, chunk.text))
        for kind in PROSE_KINDS:
            rng = rng_for(f"{lang}/{kind}")
            for n in range(BAD_PER_KIND):
                text, source, note = bad_prose(kind, n, material, rng)
                items.append(
                    Item(f"prose/{lang}/{kind}/{n:03d}", "prose", lang, kind, 0, "general", source, text, note)
                )
    return items


def code_items(pools: dict[str, list[Path]]) -> list[Item]:
    binaries = binary_sources()
    items: list[Item] = []
    for lang in CODE_LANGS:
        files = sorted((p for p in pools[lang] if not is_reference(code_key(p))), key=lambda p: rank(code_key(p)))
        for n, path in enumerate(files[:GOOD_CODE_PER_LANG]):
            text = cut_at_line(path.read_text(encoding="utf-8"), CODE_ITEM_CHARS)
            items.append(Item(f"code/{lang}/good/{n:03d}", "code", lang, "good", 1, "code", SOURCES.name(path), text))
        spare = iter(files[GOOD_CODE_PER_LANG:])
        for kind in CODE_KINDS:
            rng = rng_for(f"code/{lang}/{kind}")
            for n in range(BAD_PER_KIND):
                if kind == "generated":
                    text, note = generated_code(lang, n, binaries)
                    source = note
                else:
                    path = next(spare)
                    original = path.read_text(encoding="utf-8")
                    if lang == "python":
                        text = minify_python(original, rng) if kind == "minified" else obfuscate_python(original, rng)
                    elif kind == "minified":
                        text = minify_c_like(original, lang, rng)
                    else:
                        text = obfuscate_c_like(original, lang, rng)
                    source, note = SOURCES.name(path), ""
                text = cut_at_line(text, CODE_ITEM_CHARS) or text[:CODE_ITEM_CHARS]
                items.append(Item(f"code/{lang}/{kind}/{n:03d}", "code", lang, kind, 0, "code", source, text, note))
    return items


def reference_prose(pages: list[Page]) -> list[dict[str, object]]:
    """Reference chunks per language up to its character budget, shared by SOURCE_WEIGHTS; a source with less
    text than its share gives the rest to the others (water-filling), so every language gets its budget."""
    pools = chunk_pools(pages, "reference")
    records: list[dict[str, object]] = []
    for lang in LANGS:
        available = {source: sum(len(c.text) for c in chunks) for source, chunks in pools[lang].items()}
        budgets: dict[str, float] = {}
        left, open_sources = float(REFERENCE_CHARS[lang]), sorted(available)
        while open_sources:
            weights = sum(SOURCE_WEIGHTS[s] for s in open_sources)
            short = [s for s in open_sources if available[s] <= left * SOURCE_WEIGHTS[s] / weights]
            if not short:
                budgets.update({s: left * SOURCE_WEIGHTS[s] / weights for s in open_sources})
                break
            for source in short:
                budgets[source] = available[source]
                left -= available[source]
                open_sources.remove(source)
        for source in sorted(budgets):
            spent = 0
            for n, chunk in enumerate(pools[lang][source]):
                if spent >= budgets[source]:
                    break
                spent += len(chunk.text)
                records.append(
                    {"id": f"ref/{lang}/{source}/{n:04d}", "lang": lang, "source": source, "text": chunk.text}
                )
    return records


def reference_code(pools: dict[str, list[Path]]) -> list[dict[str, object]]:
    records: list[dict[str, object]] = []
    for lang in CODE_LANGS:
        files = sorted((p for p in pools[lang] if is_reference(code_key(p))), key=lambda p: rank(code_key(p)))
        spent = 0
        for n, path in enumerate(files):
            if spent >= REFERENCE_CODE_CHARS:
                break
            text = cut_at_line(path.read_text(encoding="utf-8"), 3 * CODE_ITEM_CHARS)
            spent += len(text)
            records.append({"id": f"ref/code/{lang}/{n:04d}", "lang": lang, "source": SOURCES.name(path), "text": text})
    return records


def count_table(
    counts: Counter[tuple[str, str, str]],
    group: str,
    rows: tuple[str, Sequence[str]],
    kinds: Sequence[str],
    reference: tuple[str, list[dict[str, object]]],
) -> list[str]:
    """Markdown table of item counts per language and kind, with the reference text each language's model sees."""
    (row_name, langs), (ref_name, ref) = rows, reference
    lines = [
        f"| {row_name} | " + " | ".join(kinds) + f" | {ref_name} | reference chars |",
        "| --- | " + " | ".join("---:" for _ in kinds) + " | ---: | ---: |",
    ]
    for lang in langs:
        refs = [r for r in ref if r["lang"] == lang]
        cells = " | ".join(str(counts[(group, lang, k)]) for k in kinds)
        lines.append(f"| {lang} | {cells} | {len(refs)} | {sum(len(str(r['text'])) for r in refs):,} |")
    return lines


def readme(items: list[Item], prose_ref: list[dict[str, object]], code_ref: list[dict[str, object]]) -> str:
    counts = Counter((i.group, i.lang, i.kind) for i in items)
    prose_kinds = ("good", *PROSE_KINDS)
    code_kinds = ("good", *CODE_KINDS)
    lines = [
        "# Labelled quality set",
        "",
        "Real good text and realistic low-quality text made from real text, labelled good (1) or bad (0), to measure",
        "whether the pipeline's quality judgement (clean-stage rules, then the perplexity stage) ranks good above bad.",
        "Built by `scripts/build_labelled_quality.py` (its docstring tells how; `--check` verifies the bytes).",
        "See `docs/stage-quality/quality.md` for the figures and what they mean.",
        "",
        "## Files",
        "",
        "- `eval.jsonl.gz`: the labelled items: `id`, `group` (prose/code), `lang` (ISO 639-1, or the programming",
        "  language for code), `kind` (`good` or the corruption), `label` (1 good, 0 bad), `domain`, `source`, `note`",
        "  (how it was made, where useful) and `text`.",
        "- `pretrain_core/data/quality_reference/{prose,code}.jsonl.gz`: the quality stage's default reference, the",
        "  text its models are fitted on (`id`, `lang`, `source`, `text`). No eval item comes from a page, chapter or",
        "  file that the reference draws from: pages are split between the two sides by a keyed SHA-1 rank (all",
        "  translations of a page on the same side), Vim's tutor and the licence texts are eval-only sources, and",
        "  paragraphs holding a line that another page also has (a source's boilerplate, e.g. every translated manual",
        "  page's translation notice) are left out.",
        "",
        "## Prose items",
        "",
        *count_table(counts, "prose", ("lang", LANGS), prose_kinds, ("reference docs", prose_ref)),
        "",
        "## Code items",
        "",
        *count_table(counts, "code", ("language", CODE_LANGS), code_kinds, ("reference files", code_ref)),
    ]
    sources = Counter((i.lang, i.source) for i in items if i.group == "prose" and i.kind == "good")
    lines += [
        "",
        "Good prose by source: "
        + "; ".join(
            f"{lang} " + ", ".join(f"{s} {c}" for (l2, s), c in sorted(sources.items()) if l2 == lang) for lang in LANGS
        )
        + ".",
        "",
        "## How each kind is made",
        "",
        "- `good`: consecutive paragraphs of one page (500-1,800 characters; 200-800 for Chinese and Japanese), one",
        "  paragraph per line; code: the first 5,000 characters of a hand-written source file (cut at a line end).",
        "- `word_salad`: a real chunk with the words of each line shuffled (CJK runs cut into 1-3 character pieces",
        "  first). Every word real, every line the same length: heuristic rules see nothing wrong.",
        "- `repeated_lines`: a real chunk with one to three of its lines inserted four to ten times each.",
        "- `keyword_stuffing`: two real lines, each followed by lists of the page's six most frequent content words",
        "  (Han/kana bigrams for CJK) in random combinations, and a tag line.",
        "- `boilerplate`: menus and related-links lists of real section titles of the handbook and FAQ in the",
        "  language, the handbook's real navigation labels, a consent banner and a footer. The banner and footer",
        "  lines are written for this set in the standard wording of such banners (`COOKIE_LINES` in the script).",
        "- `mojibake`: a real chunk saved in one encoding and read as another (en: UTF-8 as UTF-16LE; de/fr/es:",
        "  Latin-1 as UTF-8, cp850 as cp1252; ru: cp1251 as cp1252, KOI8-R as cp1251; ja: UTF-8 as cp932, Shift_JIS",
        "  as cp1252; zh: UTF-8 as GBK, GBK read as UTF-8 and saved back). Kept only where, after ftfy, at least 8%",
        "  of words (characters in CJK) are still wrong: mojibake the clean stage repairs is good text after cleaning.",
        "- `machine_template`: an apt install transcript from the system's own apt/dpkg message catalogues in the",
        "  language, filled with real installed packages (names, versions, sizes from the dpkg database).",
        "- `number_table`: a real localised section title over 15-35 rows of real numbers (CPython's math test",
        "  vectors, dpkg's installed sizes), with decimal commas in de/fr/es/ru.",
        "- code `minified`: comments and docstrings dropped, whitespace collapsed; JavaScript and C joined into one",
        "  line or wrapped at 500 or 250 characters, Python in pyminifier's style (one space per indent level).",
        "- code `obfuscated`: identifiers renamed in obfuscators' styles (`_0x3fa2c`, `Il1lI1`, `_x4f2a`), comments",
        "  dropped, layout kept: the rules see ordinary code.",
        "- code `generated`: real generated Python modules (codec tables, protoc output, Sphinx's topic dump) and",
        "  real binary files (icons, message catalogues) embedded as bin2c arrays, base64 strings or number arrays.",
        "",
        "## Sources and licences",
        "",
        "- Debian Administrator's Handbook (debian-handbook): GPL-2+ or CC-BY-SA-3.0.",
        "- Debian FAQ (debian-faq and translations): Debian FAQ licence (copies and translations permitted).",
        "- Manual pages and Python documentation (demo corpus): see pretrain_core/data/demo/SOURCES.md",
        "  (GPL-2+/GPL-3+/BSD/MIT and the Linux man-pages licence per page; PSF-2.0).",
        "- World English Bible and Reina-Valera 1909 (demo corpus): public domain. Chinese fortunes (demo corpus):",
        "  GPL-3+ package, mostly public-domain classical texts. Jargon File 4.4.7 (demo corpus): public domain.",
        "- Vim tutor (data/reference): Vim licence. Licence texts (data/reference): each permits verbatim copies.",
        "- Python 3.11 standard library and test data: PSF-2.0. protobuf: BSD-3-Clause. C headers: glibc LGPL-2.1+,",
        "  Linux UAPI GPL-2.0 WITH Linux-syscall-note, and the other -dev packages' licences; zlib examples: zlib;",
        "  Vim's maze examples: Vim licence; libstemmer example: BSD-3-Clause. npm and its modules: Artistic-2.0,",
        "  ISC, MIT. jQuery, underscore: MIT.",
        "- apt, dpkg message catalogues: GPL-2+. hicolor icons and catalogues embedded by `generated`: their",
        "  packages' licences (all DFSG-free).",
        "",
    ]
    return "\n".join(lines)


def build(out: Path) -> None:
    localised = Localised()
    pages = handbook_pages(localised) + faq_pages(localised) + demo_pages() + manpage_pages() + python_docs_pages()
    pages = without_shared_lines(pages + eval_only_pages())
    pools = {lang: code_pool(lang) for lang in CODE_LANGS}
    items = prose_items(pages, localised) + code_items(pools)
    prose_ref = reference_prose(pages)
    code_ref = reference_code(pools)
    labelled, reference = out / LABELLED_DIR, out / SHIPPED_REFERENCE_DIR
    labelled.mkdir(parents=True, exist_ok=True)
    reference.mkdir(parents=True, exist_ok=True)
    (labelled / "eval.jsonl.gz").write_bytes(gzip_jsonl(i.record() for i in items))
    (reference / "prose.jsonl.gz").write_bytes(gzip_jsonl(prose_ref))
    (reference / "code.jsonl.gz").write_bytes(gzip_jsonl(code_ref))
    (labelled / "README.md").write_text(readme(items, prose_ref, code_ref), encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    return build_or_check(build, REPO, __doc__, argv, sources=SOURCES)


if __name__ == "__main__":
    sys.exit(main())
