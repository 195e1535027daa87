#!/usr/bin/env python3
r"""Rebuild the bundled demo corpus in pretrain_core/data/demo/ from real text that Debian 12 (bookworm) packages ship.

The demo corpus lets the whole pipeline run end to end in minutes on two cores, on real text in several
languages and domains and in every ingestion format, without any download at run time. CI uses the committed
files; this script is the record of how they were made and the way to remake them.

It reads only the repository: every installed file it uses, and what the commands it runs printed (diatheke,
groff, dpkg), are recorded in data/reference/demo-sources/sources.tar.xz (scripts/source_snapshot.py). To record
them again (`--record-sources`), install the Debian packages first (the versions used are written to
pretrain_core/data/demo/SOURCES.md and data/reference/demo-sources/packages.txt):

    apt-get install --no-install-recommends diatheke sword-text-web sword-text-sparv fortunes-zh jargon-text \
        python3.11-doc debian-handbook debian-faq debian-faq-de debian-faq-fr debian-faq-ja debian-faq-ru \
        debian-faq-zh-cn groff-base manpages manpages-dev manpages-zh manpages-de manpages-fr manpages-ja \
        manpages-ru manpages-es libpython3.11-testsuite libpython3.11-dev python3-setuptools python3-protobuf \
        zlib1g-dev liblzma-dev libexpat1-dev libpng-dev perl-modules-5.36 libjs-underscore gzip

Python packages (the project's environment): pyarrow, pyyaml, warcio, zstandard.

Determinism: every input list is sorted, samples are chosen by a keyed SHA-1 rank (so a package that gains a
file does not reshuffle the others), gzip headers carry mtime 0 and no file name, zstd and Parquet settings are
fixed, and WARC record ids and dates are derived from the URL. The same recorded sources give the same bytes;
`--check` rebuilds into a temporary directory and compares.
"""

from __future__ import annotations

import gzip
import hashlib
import html
import io
import json
import re
import shutil
import subprocess
import sys
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from email.utils import formatdate
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote

import pyarrow as pa
import pyarrow.parquet as pq
import yaml
import zstandard
from rebuild import build_or_check  # scripts/rebuild.py: scripts/ is on sys.path when run
from source_snapshot import SourceSnapshot
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

REPO_ROOT = Path(__file__).resolve().parent.parent
CORPUS_DIR = Path("pretrain_core/data/demo")
DEFAULT_OUT = REPO_ROOT / CORPUS_DIR
# The installed files read and the commands' outputs (diatheke, groff, dpkg), recorded once into this archive
# (scripts/source_snapshot.py; its README gives packages and licences): every other run reads only the repository.
SOURCE_ROOTS = ("usr/share/doc/", "usr/share/man/", "usr/share/games/", "usr/share/javascript/", "usr/share/perl/")
SOURCES = SourceSnapshot(
    REPO_ROOT / "data/reference/demo-sources/sources.tar.xz", (*SOURCE_ROOTS, "usr/lib/python3", "usr/include/", "bin/")
)
SEED = "pretrain-demo-v1"
CRAWL_DATE = "2023-06-10T12:00:00Z"  # Debian 12's release day: a plausible date for the WARC "crawl".

ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")
BACKSPACE_OVERSTRIKE = re.compile(r".\x08")


@dataclass(frozen=True)
class Doc:
    """One document of a record source (JSONL or Parquet)."""

    id: str
    lang: str
    text: str
    title: str = ""
    url: str = ""


@dataclass
class Built:
    """What one builder produced: the sources.yaml entry plus the facts SOURCES.md reports."""

    name: str
    domain: str
    format: str
    path: str  # relative to the repo root
    packages: tuple[str, ...]
    licence: str
    method: str
    languages: Counter[str] = field(default_factory=Counter)
    documents: int = 0
    text_bytes: int = 0
    disk_bytes: int = 0
    text_field: str | None = None
    id_field: str | None = None
    spdx: str = ""  # the licence as an SPDX expression (LicenseRef-<name> for terms SPDX does not list)
    attribution: str = ""
    homepage: str = ""


# ---------------------------------------------------------------------------------------------------------------
# Shared helpers


def rank(key: str) -> str:
    """A stable pseudo-random order key: sampling by it keeps a choice when unrelated inputs change."""
    return hashlib.sha1(f"{SEED}:{key}".encode()).hexdigest()


def run(cmd: Sequence[str], stdin: bytes = b"") -> str:
    """A command's UTF-8 stdout, as recorded in the source archive (run on the host with --record-sources, where
    a failure stops the build: a missing package, most likely)."""

    def host_run() -> bytes:
        return subprocess.run(cmd, input=stdin, check=True, capture_output=True).stdout

    key = " ".join(cmd) + (f" < sha256:{hashlib.sha256(stdin).hexdigest()}" if stdin else "")
    return SOURCES.output(key, host_run).decode("utf-8", errors="replace")


def package_version(package: str) -> str:
    return run(["dpkg-query", "-W", "-f=${Version}", package]).strip()


def installed_files(package: str) -> list[Path]:
    """Regular files a Debian package installed on this machine, sorted (symlinks and directories left out);
    called only while recording the sources."""
    listed = subprocess.run(["dpkg", "-L", package], check=True, capture_output=True, text=True).stdout
    paths = [Path(line) for line in listed.splitlines() if line.startswith("/")]
    return sorted(p for p in paths if p.is_file() and not p.is_symlink())


def package_files(package: str) -> list[Path]:
    """Regular files a Debian package installed, as recorded (only those the build opened are in the archive)."""
    return SOURCES.listing(f"dpkg -L {package}", lambda: installed_files(package))


def package_file(package: str, suffix: str) -> Path:
    """The one file of `package` whose path ends with `suffix`."""
    matches = [p for p in package_files(package) if str(p).endswith(suffix)]
    if len(matches) != 1:
        raise SystemExit(f"{package}: expected one file ending in {suffix!r}, found {len(matches)}")
    return matches[0]


def tidy(text: str) -> str:
    """Strip trailing spaces and runs of blank lines that renderers leave, keeping the layout otherwise."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n") + "\n"


def gzip_bytes(data: bytes) -> bytes:
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, compresslevel=9, mtime=0) as handle:
        handle.write(data)
    return buffer.getvalue()


def jsonl_bytes(docs: Iterable[Doc]) -> bytes:
    lines = (
        json.dumps(
            {"id": d.id, "title": d.title, "url": d.url, "lang": d.lang, "text": d.text},
            ensure_ascii=False,
        )
        for d in docs
    )
    return "".join(line + "\n" for line in lines).encode("utf-8")


def write_file(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def write_jsonl_gz(path: Path, docs: Sequence[Doc]) -> None:
    write_file(path, gzip_bytes(jsonl_bytes(docs)))


def write_jsonl_zst(path: Path, docs: Sequence[Doc]) -> None:
    write_file(path, zstandard.ZstdCompressor(level=19, write_checksum=True).compress(jsonl_bytes(docs)))


def write_parquet(path: Path, docs: Sequence[Doc]) -> None:
    table = pa.table(
        {
            "id": [d.id for d in docs],
            "title": [d.title for d in docs],
            "url": [d.url for d in docs],
            "lang": [d.lang for d in docs],
            "text": [d.text for d in docs],
        }
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, compression="zstd", compression_level=9, row_group_size=256)


def take_within_budget(docs: Iterable[Doc], budget_bytes: int) -> list[Doc]:
    """Docs in rank order until the UTF-8 budget is spent, returned in id order."""
    chosen: list[Doc] = []
    spent = 0
    for doc in sorted(docs, key=lambda d: rank(d.id)):
        size = len(doc.text.encode("utf-8"))
        if spent + size > budget_bytes:
            continue
        chosen.append(doc)
        spent += size
    return sorted(chosen, key=lambda d: d.id)


def disk_size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


class HtmlText(HTMLParser):
    """Visible text of an HTML page with block structure kept as line breaks.

    Made for the Debian Handbook, whose DocBook HTML is regular: navigation sits in a few known containers
    (skipped by id or class), code in <pre> (kept verbatim).
    """

    SKIP_TAGS = frozenset({"head", "script", "style"})
    SKIP_IDS = frozenset({"banner", "title"})
    SKIP_CLASSES = frozenset({"docnav", "indexterm"})

    BLOCKS = frozenset(
        {"p", "div", "h1", "h2", "h3", "h4", "h5", "h6", "li", "ul", "ol", "dl", "dt", "dd", "table", "tr", "pre"}
        | {"blockquote", "br", "hr", "section", "article", "title"}
    )
    VOID = frozenset({"br", "hr", "img", "meta", "link", "input", "area", "base", "col", "embed", "source", "wbr"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.stack: list[tuple[str, bool]] = []  # (tag, skipped) for open non-void elements
        self.pre_depth = 0

    def _skipping(self) -> bool:
        return any(skipped for _, skipped in self.stack)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        classes = set((values.get("class") or "").split())
        skipped = tag in self.SKIP_TAGS or values.get("id") in self.SKIP_IDS or bool(classes & self.SKIP_CLASSES)
        if tag in self.BLOCKS and not self._skipping():
            self.parts.append("\n")
        if tag in ("td", "th") and not self._skipping():
            self.parts.append(" ")
        if tag in self.VOID:
            return
        self.stack.append((tag, skipped))
        if tag == "pre":
            self.pre_depth += 1

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break
        if tag == "pre":
            self.pre_depth = max(0, self.pre_depth - 1)
        if tag in self.BLOCKS and not self._skipping():
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._skipping():
            return
        self.parts.append(data if self.pre_depth else re.sub(r"\s+", " ", data))

    def text(self) -> str:
        lines = [
            line.strip() if not line.startswith("  ") else line.rstrip() for line in "".join(self.parts).split("\n")
        ]
        return tidy("\n".join(lines))


def html_title(page: str) -> str:
    match = re.search(r"<title[^>]*>(.*?)</title>", page, re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", match.group(1)))).strip() if match else ""


# ---------------------------------------------------------------------------------------------------------------
# general: Bibles (public domain), via the SWORD command-line reader

# diatheke's `internal` format prints one verse a line: the markup that opens it (a psalm's <title>, poetry and
# paragraph milestones), the reference, then the verse's OSIS markup. Its `plain` format is not used: the modules
# leave no space between some adjacent elements, which that filter runs together ("God</w><w>created" becomes
# "Godcreated"), and it prints the `lemma` of some Spanish words as "<H2416>".
BIBLE_VERSE = re.compile(
    r"^(?P<head>(?:<title\b[^>]*>.*?</title>|<[^>]*>|\s)*)(?P<book>[^<>]+?) (?P<chapter>\d+):(?P<verse>\d+):"
    r"(?P<body>.*)$"
)
BIBLE_TITLE = re.compile(r"<title\b[^>]*>(.*?)</title>")
BIBLE_LINE_END = re.compile(r"<(?:l\b[^>]*\beID=|lb\b)[^>]*>")  # end of a poetry line; a break inside a verse
BIBLE_ADJACENT_ELEMENTS = re.compile(r"(?<=[\w,.;:!?”’])(?:<[^>]*>)+(?=\w)")  # tags with no space around
MARKUP_TAG = re.compile(r"<[^>]*>")
SPANISH_CLITIC = re.compile(r"(?:me|te|se|nos|os|le|les|lo|los|la|las){1,2}")
SPANISH_VERB_BEFORE_CLITIC = re.compile(
    r"\w*[áéíóú]\w+"  # a stress mark before the last syllable only fits with the pronoun: sáca-lo, oyéndo-lo
    r"|\w+(?:ar|er|ir|ír|ad|ed|id)"  # infinitive or plural imperative: matar-lo, alabad-le
    r"|[a-zñ]\w*(?:ó|é|rá)"  # preterite or future, lower case (not Jehová, Josué): plantó-la, pondré-las
    r"|d[ai]|haz|vi"  # one-syllable imperatives and preterites: haz-lo, vi-lo
)


def spanish_enclitic(word: str, next_word: str) -> bool:
    """Whether `next_word` is a pronoun written onto the verb `word` (RV1909 prints sácalo, oyéndolo, alabadle).

    The module marks such a pronoun as a translator's addition right after the verb's element, so it shows up as
    two touching elements; every other touching pair in the module is two words.
    """
    return bool(SPANISH_CLITIC.fullmatch(next_word.lower()) and SPANISH_VERB_BEFORE_CLITIC.fullmatch(word))


def bible_text(markup: str, joins: Callable[[str, str], bool] | None = None) -> str:
    """Plain text of OSIS verse markup: poetry lines on lines of their own, markup dropped, words kept apart.

    The modules put no space between some adjacent elements (<w> words, <transChange> additions, <q> quotes),
    so a space goes where text would otherwise touch across tags, unless `joins(word, next_word)` says the second
    word is written onto the first.
    """

    def space(tags: re.Match[str]) -> str:
        word = re.search(r"\w*$", tags.string[: tags.start()])
        next_word = re.match(r"\w+", tags.string[tags.end() :])
        together = joins and word and next_word and joins(word[0], next_word[0])
        return "" if together else " "

    text = BIBLE_ADJACENT_ELEMENTS.sub(space, BIBLE_LINE_END.sub("\n", markup))
    lines = (line.strip() for line in html.unescape(MARKUP_TAG.sub("", text)).split("\n"))
    return "\n".join(line for line in lines if line)


def bible_chapters(
    module: str, book_key: str, joins: Callable[[str, str], bool] | None = None
) -> dict[int, list[tuple[int, str]]]:
    """Verses of one book by chapter, with poetry line breaks and psalm titles kept.

    diatheke repeats a psalm's title before every verse it covers, so a title is kept only where it changes.
    """
    out = run(["diatheke", "-b", module, "-f", "internal", "-k", book_key])
    chapters: dict[int, list[tuple[int, str]]] = {}
    headings: dict[int, list[str]] = {}
    for line in out.splitlines():
        if not line.strip() or line.startswith(f"({module})"):
            continue
        match = BIBLE_VERSE.match(line)
        if not match:
            raise SystemExit(f"{module} {book_key}: unexpected diatheke line {line[:80]!r}")
        chapter_no = int(match["chapter"])
        titles = [bible_text(title, joins) for title in BIBLE_TITLE.findall(match["head"])]
        heading = titles if titles != headings.get(chapter_no) else []
        if titles:
            headings[chapter_no] = titles
        verse = "\n".join([*heading, bible_text(match["body"], joins)])
        chapters.setdefault(chapter_no, []).append((int(match["verse"]), verse))
    return chapters


def bible_docs(
    source: str,
    module: str,
    lang: str,
    books: Sequence[tuple[str, str]],
    joins: Callable[[str, str], bool] | None = None,
) -> list[Doc]:
    """One document per chapter: a title line, then the verses numbered as printed Bibles do."""
    docs = []
    for key, title in books:
        for chapter, verses in sorted(bible_chapters(module, key, joins).items()):
            body = "\n".join(f"{number} {text.strip()}" for number, text in verses if text.strip())
            if not body:
                continue
            slug = key.replace(" ", "_")
            docs.append(
                Doc(
                    id=f"{source}/{slug}/{chapter:03d}",
                    lang=lang,
                    title=f"{title} {chapter}",
                    url="",
                    text=f"{title} {chapter}\n\n{body}\n",
                )
            )
    return docs


WEB_BOOKS = [
    ("Genesis", "Genesis"),
    ("Ruth", "Ruth"),
    ("II Kings", "2 Kings"),
    ("Psalms", "Psalms"),
    ("Ecclesiastes", "Ecclesiastes"),
    ("Isaiah", "Isaiah"),
    ("Jonah", "Jonah"),
    ("Tobit", "Tobit"),
    ("Mark", "Mark"),
    ("John", "John"),
]
RV1909_BOOKS = [
    ("Genesis", "Génesis"),
    ("Ruth", "Rut"),
    ("Psalms", "Salmos"),
    ("Proverbs", "Proverbios"),
    ("Mark", "Marcos"),
    ("John", "Juan"),
]


def build_bible_web_en(out: Path) -> Built:
    docs = bible_docs("bible_web_en", "engWEB2015eb", "en", WEB_BOOKS)
    path = out / "general" / "bible_web_en.jsonl.gz"
    write_jsonl_gz(path, docs)
    books = ", ".join(title for _, title in WEB_BOOKS)
    return finish(
        Built(
            name="bible_web_en",
            spdx="LicenseRef-scancode-public-domain",
            attribution="World English Bible (eBible.org), SWORD module engWEB2015eb",
            homepage="https://ebible.org/web/",
            domain="general",
            format="jsonl",
            path=rel(out, path),
            packages=("sword-text-web", "diatheke"),
            licence="Public domain (World English Bible); module packaging GPL-2+",
            method=(
                f"`diatheke -b engWEB2015eb -f internal -k BOOK` for {books}, its OSIS markup turned into text by "
                "the script (tags dropped, a space kept between touching elements); one document per chapter (title "
                "line, then one numbered verse per line, poetry line breaks and psalm titles kept). 2 Kings 18-20 and "
                "Isaiah 36-39, and Psalms 14 and 53, are near-identical passages in the original text: natural "
                "near-duplicates."
            ),
            text_field="text",
            id_field="id",
        ),
        docs,
        path,
    )


def build_bible_rv1909_es(out: Path) -> Built:
    docs = bible_docs("bible_rv1909_es", "spaRV1909eb", "es", RV1909_BOOKS, joins=spanish_enclitic)
    path = out / "general" / "bible_rv1909_es.jsonl.gz"
    write_jsonl_gz(path, docs)
    books = ", ".join(title for _, title in RV1909_BOOKS)
    return finish(
        Built(
            name="bible_rv1909_es",
            spdx="LicenseRef-scancode-public-domain",
            attribution="Reina-Valera 1909, SWORD module spaRV1909eb",
            homepage="https://crosswire.org/sword/modules/",
            domain="general",
            format="jsonl",
            path=rel(out, path),
            packages=("sword-text-sparv", "diatheke"),
            licence="Public domain (Reina-Valera 1909)",
            method=(
                f"`diatheke -b spaRV1909eb -f internal -k BOOK` for {books}, its OSIS markup turned into text by "
                "the script (tags and Strong's numbers dropped, a space kept between touching elements except before "
                "an enclitic pronoun: sácalo); one document per chapter, titled with the Spanish book name, one "
                "numbered verse per line."
            ),
            text_field="text",
            id_field="id",
        ),
        docs,
        path,
    )


# ---------------------------------------------------------------------------------------------------------------
# general: Chinese quotations and poetry (fortunes-zh)

FORTUNES_ZH_FILES = ("chinese", "tang300", "song100")
FORTUNES_ZH_PAGE_CHARS = 800
FORTUNES_ZH_BUDGET = 1_000_000


DEBIAN_REFERENCE_HEADING = re.compile(r"^(\d+(\.\d+)*\.|第\s*\d+\s*章)\s")  # "12.4.4. ", "第 12 章 "


def fortune_entries(path: Path) -> list[str]:
    """Entries of a fortune file without colour codes, less the Debian Reference material some files quote."""
    text = ANSI_ESCAPE.sub("", path.read_text(encoding="utf-8"))
    entries = (tidy(entry).strip("\n") for entry in re.split(r"\n%\n", text))
    return [e for e in entries if e.strip() and not DEBIAN_REFERENCE_HEADING.match(e) and "Debian 参考" not in e]


def build_fortunes_zh(out: Path) -> Built:
    pages: list[Doc] = []
    for name in FORTUNES_ZH_FILES:
        entries = fortune_entries(package_file("fortunes-zh", f"/fortunes/{name}"))
        page: list[str] = []
        for entry in [*entries, ""]:
            if entry:
                page.append(entry)
            if page and (not entry or sum(len(e) for e in page) >= FORTUNES_ZH_PAGE_CHARS):
                pages.append(
                    Doc(id=f"fortunes_zh/{name}/{len(pages):04d}", lang="zh", title=name, text="\n\n".join(page) + "\n")
                )
                page = []
    docs = take_within_budget(pages, FORTUNES_ZH_BUDGET)
    path = out / "general" / "fortunes_zh.jsonl.gz"
    write_jsonl_gz(path, docs)
    return finish(
        Built(
            name="fortunes_zh",
            spdx="GPL-3.0-or-later",
            attribution="fortunes-zh, the Debian package's fortune files",
            homepage="https://packages.debian.org/bookworm/fortunes-zh",
            domain="general",
            format="jsonl",
            path=rel(out, path),
            packages=("fortunes-zh",),
            licence=(
                "GPL-3+ (package); the texts are mostly classical Chinese (Analects, Tao Te Ching, Shijing, Tang and "
                "Song poetry, proverbs: public domain) plus short modern quotations and Debian documents"
            ),
            method=(
                f"Entries of the fortune files {', '.join(FORTUNES_ZH_FILES)} (split on `%` lines, ANSI colour "
                f"codes removed), packed in file order into pages of at least {FORTUNES_ZH_PAGE_CHARS} characters; "
                f"pages taken in SHA-1 rank order up to {FORTUNES_ZH_BUDGET:,} bytes of text. Simplified and "
                "traditional characters both occur. The `chinese` file also quotes the Debian Reference: whole "
                "sections (entries opening with a section number such as `2. `, `12.4.4. ` or `第 12 章`) and lines "
                "of its reference card (entries attributed to `Debian 参考…`). That is technical manual text, not "
                "general prose, and is left out; short modern quotations (Debian Code of Conduct, books) stay."
            ),
            text_field="text",
            id_field="id",
        ),
        docs,
        path,
    )


# ---------------------------------------------------------------------------------------------------------------
# general (zstd JSONL): the Jargon File

JARGON_ENTRY = re.compile(r"^   :(?P<head>[^:].*?):(?P<rest>.*)$")
JARGON_SECTION = re.compile(r"^(Chapter\s\d+\.|Appendix\s[A-Z]\.)\s.+$")  # \s: the file uses NBSP
JARGON_PART = re.compile(r"^\s*Part\s[IVX]+\.\s")


def jargon_url(headword: str) -> str:
    first = headword[0].upper()
    letter = first if first.isalpha() else "0"
    return f"http://www.catb.org/jargon/html/{letter}/{quote(headword.replace(' ', '-'), safe='-')}.html"


def build_jargon_en(out: Path) -> Built:
    lines = gzip.decompress(package_file("jargon-text", "/jargon.txt.gz").read_bytes()).decode("utf-8").splitlines()
    docs: list[Doc] = []
    title = ""
    body: list[str] = []
    kind = ""

    def flush() -> None:
        text = tidy("\n".join(line[3:] if line.startswith("   ") else line for line in body))
        if kind and text.strip():
            number = len(docs)
            url = jargon_url(title) if kind == "entry" else ""
            docs.append(Doc(id=f"jargon_en/{number:05d}", lang="en", title=title, url=url, text=text))

    for line in lines:
        section = JARGON_SECTION.match(line)
        entry = JARGON_ENTRY.match(line)
        if section:
            flush()
            kind, title, body = "section", line.strip().replace("\xa0", " "), [line.strip(), ""]
        elif line.strip() == "Glossary" or JARGON_PART.match(line):
            flush()
            kind, title, body = "", "", []  # part title pages and the glossary's headword index are not text
        elif entry:
            flush()
            kind, title, body = "entry", entry["head"], [f"{entry['head']}:{entry['rest']}".rstrip()]
        elif kind:
            body.append(line)
    flush()
    path = out / "general" / "jargon_en.jsonl.zst"
    write_jsonl_zst(path, docs)
    return finish(
        Built(
            name="jargon_en",
            spdx="LicenseRef-scancode-public-domain",
            attribution="The Jargon File 4.4.7, edited by Eric S. Raymond",
            homepage="http://www.catb.org/jargon/",
            domain="general",
            format="jsonl",
            path=rel(out, path),
            packages=("jargon-text",),
            licence="Public domain (The Jargon File 4.4.7)",
            method=(
                "`/usr/share/doc/jargon-text/jargon.txt.gz` split into its chapters and appendices (one document "
                "each) and its glossary entries (one document per headword, the headword line first, with the "
                "entry's catb.org URL); the headword index is left out. Many entries are one line long, as in any "
                "dictionary: they exercise the short-document filters. Written as zstd-compressed JSONL."
            ),
            text_field="text",
            id_field="id",
        ),
        docs,
        path,
    )


# ---------------------------------------------------------------------------------------------------------------
# specialist (Parquet): Python documentation sources, Debian Administrator's Handbook

PYTHON_DOCS_DIRS = ("library", "tutorial", "howto", "faq", "reference", "using")
PYTHON_DOCS_ALWAYS = ("license",)  # repeats the PSF licence of code/cpython/LICENSE: a cross-source near-duplicate
PYTHON_DOCS_BUDGET = 1_500_000
PYTHON_DOCS_MAX_FILE = 60_000


def python_docs_doc(root: Path, file: Path) -> Doc:
    page = file.relative_to(root).as_posix().removesuffix(".rst.txt")
    return Doc(
        id=f"python_docs/{page}",
        lang="en",
        title=page,
        url=f"https://docs.python.org/3.11/{page}.html",
        text=file.read_text(encoding="utf-8"),
    )


def python_docs_chosen(root: Path) -> list[Path]:
    """The documentation sources taken, chosen on this machine (so the archive keeps only those): wanted by folder
    or name, small enough, then in rank order within the budget the always-taken pages leave."""
    candidates: list[Doc] = []
    always: list[Doc] = []
    for file in installed_files("python3.11-doc"):
        if not file.is_relative_to(root) or not file.name.endswith(".rst.txt"):
            continue
        page = file.relative_to(root).as_posix().removesuffix(".rst.txt")
        wanted = page.split("/")[0] in PYTHON_DOCS_DIRS or page in PYTHON_DOCS_ALWAYS
        if wanted and file.stat().st_size <= PYTHON_DOCS_MAX_FILE:
            (always if page in PYTHON_DOCS_ALWAYS else candidates).append(python_docs_doc(root, file))
    budget = PYTHON_DOCS_BUDGET - sum(len(d.text.encode("utf-8")) for d in always)
    return [
        root / f"{d.title}.rst.txt"
        for d in sorted([*always, *take_within_budget(candidates, budget)], key=lambda d: d.id)
    ]


def build_python_docs(out: Path) -> Built:
    root = SOURCES.path("usr/share/doc/python3.11/html/_sources")
    listing = f"python3.11-doc sources taken ({', '.join(PYTHON_DOCS_DIRS)}; up to {PYTHON_DOCS_MAX_FILE} bytes)"
    docs = [python_docs_doc(root, file) for file in SOURCES.listing(listing, lambda: python_docs_chosen(root))]
    path = out / "specialist" / "python_docs.parquet"
    write_parquet(path, docs)
    return finish(
        Built(
            name="python_docs",
            spdx="PSF-2.0 AND 0BSD",
            attribution="Python Software Foundation, the Python 3.11 documentation",
            homepage="https://docs.python.org/3.11/",
            domain="specialist",
            format="parquet",
            path=rel(out, path),
            packages=("python3.11-doc",),
            licence="PSF-2.0 (Python documentation; examples also 0BSD)",
            method=(
                "reStructuredText sources of the Python 3.11 documentation (`html/_sources/*.rst.txt`) under "
                f"{', '.join(PYTHON_DOCS_DIRS)}, files under {PYTHON_DOCS_MAX_FILE:,} bytes, taken in SHA-1 rank "
                f"order up to {PYTHON_DOCS_BUDGET:,} bytes, plus the top-level `license` page (the PSF licence text, "
                "which code/cpython/LICENSE repeats); one row per file with its docs.python.org URL. Markup is left "
                "as is: real documentation sources carry it."
            ),
            text_field="text",
            id_field="id",
        ),
        docs,
        path,
    )


HANDBOOK_PAGES = {"zh-CN": 24, "en-US": 16, "de-DE": 8, "fr-FR": 8, "ja-JP": 8, "es-ES": 6, "ru-RU": 6}
HANDBOOK_LANG = {
    "zh-CN": "zh",
    "en-US": "en",
    "de-DE": "de",
    "fr-FR": "fr",
    "ja-JP": "ja",
    "es-ES": "es",
    "ru-RU": "ru",
}
HANDBOOK_MIN_CHARS = 1_500
HANDBOOK_MAX_BYTES = 40_000


def handbook_text(page: str) -> str:
    parser = HtmlText()
    parser.feed(page)
    parser.close()
    return parser.text()


def word_shingles(text: str, n: int = 5) -> set[tuple[str, ...]]:
    words = re.findall(r"\w+", text.lower())
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def untranslated_pairs(docs: Sequence[Doc], threshold: float = 0.8) -> list[str]:
    """Same page in two locales whose texts are near-identical: translations that were never done."""
    by_page: dict[str, list[Doc]] = {}
    for doc in docs:
        by_page.setdefault(doc.id.rsplit("/", 1)[1], []).append(doc)
    pairs = []
    for page, versions in sorted(by_page.items()):
        for i, a in enumerate(versions):
            for b in versions[i + 1 :]:
                sa, sb = word_shingles(a.text), word_shingles(b.text)
                similarity = len(sa & sb) / max(1, len(sa | sb))
                if similarity >= threshold:
                    pairs.append(
                        f"{page} ({a.id.split('/')[1]} / {b.id.split('/')[1]}, 5-gram Jaccard {similarity:.2f})"
                    )
    return pairs


def build_debian_handbook(out: Path) -> Built:
    root = SOURCES.path("usr/share/doc/debian-handbook/html")
    files = [f for f in package_files("debian-handbook") if f.suffix == ".html" and f.name != "index.html"]
    docs: list[Doc] = []
    for locale, wanted in HANDBOOK_PAGES.items():
        pages = sorted((f for f in files if f.parent == root / locale), key=lambda f: rank(f"{locale}/{f.name}"))
        taken = 0
        for file in pages:
            if taken == wanted:
                break
            page = file.read_text(encoding="utf-8")
            text = handbook_text(page)
            if len(text) < HANDBOOK_MIN_CHARS or len(text.encode("utf-8")) > HANDBOOK_MAX_BYTES:
                continue
            canonical = re.search(r'rel="canonical" href="([^"]+)"', page)
            docs.append(
                Doc(
                    id=f"debian_handbook/{locale}/{file.stem}",
                    lang=HANDBOOK_LANG[locale],
                    title=html_title(page),
                    url=canonical.group(1) if canonical else "",
                    text=text,
                )
            )
            taken += 1
    docs.sort(key=lambda d: d.id)
    path = out / "specialist" / "debian_handbook.parquet"
    write_parquet(path, docs)
    counts = ", ".join(f"{locale} {n}" for locale, n in HANDBOOK_PAGES.items())
    pairs = "; ".join(untranslated_pairs(docs)) or "none in this sample"
    return finish(
        Built(
            name="debian_handbook",
            spdx="GPL-2.0-or-later OR CC-BY-SA-3.0",
            attribution="Raphaël Hertzog and Roland Mas, The Debian Administrator's Handbook, and its translators",
            homepage="https://debian-handbook.info/",
            domain="specialist",
            format="parquet",
            path=rel(out, path),
            packages=("debian-handbook",),
            licence="GPL-2+ or CC-BY-SA-3.0 (The Debian Administrator's Handbook and its translations)",
            method=(
                "HTML pages of the handbook (`/usr/share/doc/debian-handbook/html/LOCALE/*.html`, index left out) "
                f"in SHA-1 rank order per locale ({counts} pages), converted to text by the script's HTML parser "
                "(navigation banners and index anchors skipped, block elements as line breaks, <pre> kept), "
                f"keeping pages of {HANDBOOK_MIN_CHARS:,} characters to {HANDBOOK_MAX_BYTES:,} bytes; URL from each "
                "page's canonical link. `lang` is the page's locale, but translations are partial: many pages are "
                "partly or wholly English, which language identification has to cope with, and an untranslated page "
                f"sampled in two locales is a natural near-duplicate. Such pairs here: {pairs}."
            ),
            text_field="text",
            id_field="id",
        ),
        docs,
        path,
    )


# ---------------------------------------------------------------------------------------------------------------
# specialist (text tree): manual pages rendered to text, in seven languages

MANPAGE_SETS = (  # (language directory, packages, man directory as recorded, pages wanted)
    ("en", ("manpages", "manpages-dev"), "usr/share/man", 40),
    ("zh_CN", ("manpages-zh",), "usr/share/man/zh_CN", 50),
    ("de", ("manpages-de",), "usr/share/man/de", 18),
    ("fr", ("manpages-fr",), "usr/share/man/fr", 18),
    ("ja", ("manpages-ja",), "usr/share/man/ja", 18),
    ("ru", ("manpages-ru",), "usr/share/man/ru", 14),
    ("es", ("manpages-es",), "usr/share/man/es", 14),
)
MANPAGE_MIN_CHARS = 1_200
MANPAGE_MAX_BYTES = 16_000
MANPAGE_LANG = {"en": "en", "zh_CN": "zh", "de": "de", "fr": "fr", "ja": "ja", "ru": "ru", "es": "es"}


def render_manpage(source: bytes) -> str:
    """Plain text as `man` shows it at 78 columns, left-adjusted so CJK lines are not padded with spaces."""
    roff = b".ad l\n.nh\n" + source
    rendered = run(["groff", "-k", "-Tutf8", "-mandoc", "-rLL=78n", "-rcR=1", "-P-cbou"], stdin=roff)
    text = BACKSPACE_OVERSTRIKE.sub("", rendered)
    return tidy(ANSI_ESCAPE.sub("", text))


def build_manpages(out: Path) -> Built:
    base = out / "text" / "manpages"
    languages: Counter[str] = Counter()
    documents = 0
    text_bytes = 0
    packages_used: list[str] = []
    for lang_dir, packages, man_dir, wanted in MANPAGE_SETS:
        pattern = re.compile(rf"^/{re.escape(man_dir)}/man([1-8])/[^/]+\.[1-8][^/]*\.gz$")
        candidates = []
        for package in packages:
            packages_used.append(package)
            for file in package_files(package):
                match = pattern.match(SOURCES.name(file))
                if match:
                    candidates.append((rank(f"{lang_dir}/{file.name}"), file, match.group(1)))
        taken = 0
        for _, file, section in sorted(candidates):
            if taken == wanted:
                break
            source = gzip.decompress(file.read_bytes())
            if source.lstrip().startswith(b".so "):
                continue  # a redirect to another page
            text = render_manpage(source)
            if len(text) < MANPAGE_MIN_CHARS or len(text.encode("utf-8")) > MANPAGE_MAX_BYTES:
                continue
            name = file.name.removesuffix(".gz")
            write_file(base / lang_dir / f"man{section}" / f"{name}.txt", text.encode("utf-8"))
            languages[MANPAGE_LANG[lang_dir]] += 1
            documents += 1
            text_bytes += len(text.encode("utf-8"))
            taken += 1
    counts = ", ".join(f"{lang} {n}" for lang, _, _, n in MANPAGE_SETS)
    built = Built(
        name="manpages",
        spdx=(
            "GPL-2.0-or-later AND BSD-3-Clause AND MIT AND Linux-man-pages-copyleft AND GFDL-1.2-or-later "
            "AND GPL-3.0-or-later"
        ),
        attribution="The Linux man-pages project and the manpages-l10n translators",
        homepage="https://www.kernel.org/doc/man-pages/",
        domain="specialist",
        format="text",
        path=rel(out, base),
        packages=tuple(packages_used),
        licence=(
            "Per page, all DFSG-free: manpages/manpages-dev GPL-2+, BSD, MIT and the Linux man-pages copyleft "
            "licence; manpages-zh GFDL-1.2+/GPL-2+; manpages-de/-fr/-ru/-es translations GPL-3+ (originals under "
            "their own free licences); manpages-ja under the licences of the original pages"
        ),
        method=(
            f"Manual pages in sections 1-8 of each package ({counts} pages per language directory), picked in "
            "SHA-1 rank order, `.so` redirects skipped, rendered with `groff -k -Tutf8 -mandoc -rLL=78n -rcR=1 "
            "-P-cbou` after a `.ad l`/`.nh` prologue (left-adjusted, no hyphenation, so CJK text gets no padding), "
            f"trailing spaces trimmed; pages of {MANPAGE_MIN_CHARS:,} characters to {MANPAGE_MAX_BYTES:,} bytes kept. "
            "One .txt file per page: text/manpages/LANG/manN/NAME.N.txt."
        ),
    )
    built.languages, built.documents, built.text_bytes = languages, documents, text_bytes
    built.disk_bytes = disk_size(base)
    return built


# ---------------------------------------------------------------------------------------------------------------
# code: a source tree of real files, including what the code reader must skip

CODE_FILES: tuple[tuple[str, str, str], ...] = (  # (package, installed path suffix, path in the tree)
    # CPython standard library (PSF-2.0)
    ("libpython3.11-stdlib", "/python3.11/LICENSE.txt", "cpython/LICENSE"),
    ("libpython3.11-minimal", "/python3.11/textwrap.py", "cpython/Lib/textwrap.py"),
    ("libpython3.11-stdlib", "/python3.11/shlex.py", "cpython/Lib/shlex.py"),
    ("libpython3.11-minimal", "/python3.11/fnmatch.py", "cpython/Lib/fnmatch.py"),
    ("libpython3.11-minimal", "/python3.11/glob.py", "cpython/Lib/glob.py"),
    ("libpython3.11-minimal", "/python3.11/bisect.py", "cpython/Lib/bisect.py"),
    ("libpython3.11-minimal", "/python3.11/heapq.py", "cpython/Lib/heapq.py"),
    ("libpython3.11-stdlib", "/python3.11/colorsys.py", "cpython/Lib/colorsys.py"),
    ("libpython3.11-minimal", "/python3.11/csv.py", "cpython/Lib/csv.py"),
    ("libpython3.11-stdlib", "/python3.11/graphlib.py", "cpython/Lib/graphlib.py"),
    ("libpython3.11-stdlib", "/python3.11/queue.py", "cpython/Lib/queue.py"),
    ("libpython3.11-stdlib", "/python3.11/sched.py", "cpython/Lib/sched.py"),
    ("libpython3.11-minimal", "/python3.11/string.py", "cpython/Lib/string.py"),
    ("libpython3.11-minimal", "/python3.11/reprlib.py", "cpython/Lib/reprlib.py"),
    ("libpython3.11-stdlib", "/python3.11/numbers.py", "cpython/Lib/numbers.py"),
    ("libpython3.11-stdlib", "/python3.11/statistics.py", "cpython/Lib/statistics.py"),
    ("libpython3.11-minimal", "/python3.11/ast.py", "cpython/Lib/ast.py"),
    ("libpython3.11-minimal", "/python3.11/token.py", "cpython/Lib/token.py"),
    ("libpython3.11-minimal", "/python3.11/keyword.py", "cpython/Lib/keyword.py"),
    ("libpython3.11-minimal", "/python3.11/stringprep.py", "cpython/Lib/stringprep.py"),
    ("libpython3.11-stdlib", "/python3.11/json/__init__.py", "cpython/Lib/json/__init__.py"),
    ("libpython3.11-stdlib", "/python3.11/json/decoder.py", "cpython/Lib/json/decoder.py"),
    ("libpython3.11-stdlib", "/python3.11/json/encoder.py", "cpython/Lib/json/encoder.py"),
    ("libpython3.11-stdlib", "/python3.11/json/scanner.py", "cpython/Lib/json/scanner.py"),
    ("libpython3.11-stdlib", "/python3.11/json/tool.py", "cpython/Lib/json/tool.py"),
    ("libpython3.11-testsuite", "/test/encoded_modules/__init__.py", "cpython/Lib/test/encoded_modules/__init__.py"),
    (
        "libpython3.11-testsuite",
        "/test/encoded_modules/module_iso_8859_1.py",
        "cpython/Lib/test/encoded_modules/module_iso_8859_1.py",
    ),
    (
        "libpython3.11-testsuite",
        "/test/encoded_modules/module_koi8_r.py",
        "cpython/Lib/test/encoded_modules/module_koi8_r.py",
    ),
    ("libpython3.11-dev", "/python3.11/pymacro.h", "cpython/Include/pymacro.h"),
    ("libpython3.11-dev", "/python3.11/pystrcmp.h", "cpython/Include/pystrcmp.h"),
    ("libpython3.11-dev", "/python3.11/bytesobject.h", "cpython/Include/bytesobject.h"),
    # zlib examples (zlib licence)
    ("zlib1g-dev", "/examples/zpipe.c", "zlib/examples/zpipe.c"),
    ("zlib1g-dev", "/examples/gzjoin.c", "zlib/examples/gzjoin.c"),
    ("zlib1g-dev", "/examples/fitblk.c", "zlib/examples/fitblk.c"),
    ("zlib1g-dev", "/examples/zran.c", "zlib/examples/zran.c"),
    ("zlib1g-dev", "/examples/zran.h", "zlib/examples/zran.h"),
    # xz examples (0BSD)
    ("liblzma-dev", "/examples/01_compress_easy.c", "xz/doc/examples/01_compress_easy.c"),
    ("liblzma-dev", "/examples/02_decompress.c", "xz/doc/examples/02_decompress.c"),
    ("liblzma-dev", "/examples/Makefile", "xz/doc/examples/Makefile"),
    # expat examples (MIT)
    ("libexpat1-dev", "/examples/elements.c", "expat/examples/elements.c"),
    ("libexpat1-dev", "/examples/outline.c", "expat/examples/outline.c"),
    # libpng example program and its test image (libpng licence): the PNG is the binary file
    ("libpng-dev", "/examples/example.c", "libpng/example.c"),
    ("libpng-dev", "/examples/pngtest.png", "libpng/pngtest.png"),
    # Perl core modules (Artistic or GPL-1+)
    ("perl-modules-5.36", "/Text/Wrap.pm", "perl/lib/Text/Wrap.pm"),
    ("perl-modules-5.36", "/Text/ParseWords.pm", "perl/lib/Text/ParseWords.pm"),
    ("perl-modules-5.36", "/File/Basename.pm", "perl/lib/File/Basename.pm"),
    # gzip's shell scripts (GPL-3+), installed without an extension; stored as NAME.sh
    ("gzip", "/bin/zgrep", "gzip/zgrep.sh"),
    ("gzip", "/bin/zdiff", "gzip/zdiff.sh"),
    ("gzip", "/bin/gzexe", "gzip/gzexe.sh"),
    ("gzip", "/bin/znew", "gzip/znew.sh"),
    ("gzip", "/bin/zmore", "gzip/zmore.sh"),
    # Sphinx's JavaScript as shipped with the Python docs (BSD-2-Clause)
    ("python3.11-doc", "/_static/doctools.js", "sphinx/static/doctools.js"),
    ("python3.11-doc", "/_static/searchtools.js", "sphinx/static/searchtools.js"),
    ("python3.11-doc", "/_static/sphinx_highlight.js", "sphinx/static/sphinx_highlight.js"),
    ("python3.11-doc", "/_static/language_data.js", "sphinx/static/language_data.js"),
    # a vendored copy of another project, as npm and Python projects keep them
    ("libjs-underscore", "/underscore/underscore.js", "sphinx/node_modules/underscore/underscore.js"),
    ("python3-setuptools", "/_vendor/packaging/version.py", "setuptools/vendor/packaging/version.py"),
    ("python3-setuptools", "/_vendor/packaging/_structures.py", "setuptools/vendor/packaging/_structures.py"),
    # protoc output (BSD-3-Clause): generated code
    ("python3-protobuf", "/google/protobuf/timestamp_pb2.py", "protobuf/python/google/protobuf/timestamp_pb2.py"),
    ("python3-protobuf", "/google/protobuf/type_pb2.py", "protobuf/python/google/protobuf/type_pb2.py"),
)
CODE_LANGUAGE = {
    ".py": "python",
    ".c": "c",
    ".h": "c",
    ".js": "javascript",
    ".pm": "perl",
    ".sh": "shell",
    "Makefile": "makefile",
}


def build_code(out: Path) -> Built:
    base = out / "code"
    languages: Counter[str] = Counter()
    text_bytes = 0
    for package, suffix, target in CODE_FILES:
        data = package_file(package, suffix).read_bytes()
        write_file(base / target, data)
        name = Path(target).name
        languages[CODE_LANGUAGE.get(name, CODE_LANGUAGE.get(Path(target).suffix, "other"))] += 1
        text_bytes += len(data)
    built = Built(
        name="code",
        spdx=(
            "PSF-2.0 AND Zlib AND 0BSD AND MIT AND Libpng AND (Artistic-1.0-Perl OR GPL-1.0-or-later) AND "
            "GPL-3.0-or-later AND BSD-2-Clause AND (Apache-2.0 OR BSD-2-Clause) AND BSD-3-Clause"
        ),
        attribution="CPython, zlib, xz, expat, libpng, Perl, gzip, Sphinx, underscore, packaging and protobuf authors",
        homepage="https://sources.debian.org/",
        domain="code",
        format="code",
        path=rel(out, base),
        packages=tuple(sorted({package for package, _, _ in CODE_FILES})),
        licence=(
            "Per project: CPython PSF-2.0; zlib licence; xz 0BSD; expat MIT; libpng licence; Perl Artistic-1 or "
            "GPL-1+; gzip GPL-3+; Sphinx BSD-2-Clause; underscore MIT; packaging Apache-2.0 or BSD-2-Clause; "
            "protobuf BSD-3-Clause"
        ),
        method=(
            "Fixed list of files copied byte for byte into an upstream-like layout (code/PROJECT/...). On purpose it "
            "also holds what a code reader must skip: `sphinx/node_modules/` and `setuptools/vendor/` (vendored "
            "copies), protoc output `*_pb2.py` and CPython's `token.py`/`keyword.py`/`stringprep.py` (generated, "
            "with 'Auto-generated by' / 'DO NOT EDIT' headers), `libpng/pngtest.png` (binary), two Latin-1/KOI8-R "
            "test modules of CPython (not UTF-8), and a licence file. gzip's scripts are installed without an "
            "extension and are stored as NAME.sh."
        ),
    )
    built.languages, built.documents, built.text_bytes = languages, len(CODE_FILES), text_bytes
    built.disk_bytes = disk_size(base)
    return built


# ---------------------------------------------------------------------------------------------------------------
# general (WARC): the Debian FAQ as crawled web pages

FAQ_LANGS = ("en", "de", "fr", "ja", "ru", "zh-cn")
FAQ_URL = "https://www.debian.org/doc/manuals/debian-faq/"
FAQ_PACKAGES = {
    "en": "debian-faq",
    "de": "debian-faq-de",
    "fr": "debian-faq-fr",
    "ja": "debian-faq-ja",
    "ru": "debian-faq-ru",
    "zh-cn": "debian-faq-zh-cn",
}
FAQ_EXTRAS = (("debian.css", "text/css"), ("images/note.png", "image/png"))


def faq_pages() -> Iterator[tuple[str, str, Path, str]]:
    """(language, URL, file, content type) for every FAQ page and a few of the page's resources."""
    for lang in FAQ_LANGS:
        files = package_files(FAQ_PACKAGES[lang])
        for file in files:
            if file.name.endswith(f".{lang}.html"):
                yield lang, FAQ_URL + file.name, file, "text/html; charset=UTF-8"
    en_root = SOURCES.path("usr/share/doc/debian/FAQ")
    for name, content_type in FAQ_EXTRAS:
        yield "", FAQ_URL + name, en_root / name, content_type


def warc_id(kind: str, url: str) -> str:
    return f"<urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, f'{kind}:{url}')}>"


def build_debian_faq_web(out: Path) -> Built:
    path = out / "web" / "debian_faq.warc.gz"
    path.parent.mkdir(parents=True, exist_ok=True)
    languages: Counter[str] = Counter()
    documents = 0
    text_bytes = 0
    with path.open("wb") as handle:
        writer = WARCWriter(handle, gzip=True, warc_version="1.1")
        info = b"software: scripts/build_demo_corpus.py\r\nformat: WARC File Format 1.1\r\n"
        info_headers = StatusAndHeaders(
            "",
            [
                ("WARC-Type", "warcinfo"),
                ("WARC-Record-ID", warc_id("warcinfo", path.name)),
                ("WARC-Filename", path.name),
                ("WARC-Date", CRAWL_DATE),
            ],
            protocol="WARC/1.1",
        )
        writer.write_record(
            writer.create_warc_record(
                "", "warcinfo", payload=io.BytesIO(info), length=len(info), warc_headers=info_headers
            )
        )
        for lang, url, file, content_type in faq_pages():
            body = file.read_bytes()
            host_path = url.removeprefix("https://www.debian.org")
            request = StatusAndHeaders(
                f"GET {host_path} HTTP/1.1",
                [("Host", "www.debian.org"), ("User-Agent", "pretrain-demo/1.0"), ("Accept", "*/*")],
                is_http_request=True,
            )
            response = StatusAndHeaders(
                "200 OK",
                [
                    ("Date", "Sat, 10 Jun 2023 12:00:00 GMT"),
                    ("Server", "Apache"),
                    ("Last-Modified", formatdate(file.stat().st_mtime, usegmt=True)),
                    ("Content-Type", content_type),
                    ("Content-Length", str(len(body))),
                ],
                protocol="HTTP/1.1",
            )
            common = {"WARC-Date": CRAWL_DATE}
            writer.write_record(
                writer.create_warc_record(
                    url,
                    "request",
                    http_headers=request,
                    warc_headers_dict={**common, "WARC-Record-ID": warc_id("request", url)},
                )
            )
            writer.write_record(
                writer.create_warc_record(
                    url,
                    "response",
                    payload=io.BytesIO(body),
                    length=len(body),
                    http_headers=response,
                    warc_headers_dict={
                        **common,
                        "WARC-Record-ID": warc_id("response", url),
                        "WARC-Concurrent-To": warc_id("request", url),
                    },
                )
            )
            if content_type.startswith("text/html"):
                documents += 1
                languages["zh" if lang == "zh-cn" else lang] += 1
                text_bytes += len(body)
    built = Built(
        name="debian_faq_web",
        spdx="LicenseRef-Debian-FAQ",
        attribution=(
            "J.H.M. Dassen, Chuck Stickelman, Susan G. Kleinmann, Sven Rudolph, Santiago Vila, Josip Rodin and "
            "Javier Fernández-Sanguino: The Debian GNU/Linux FAQ"
        ),
        homepage="https://www.debian.org/doc/manuals/debian-faq/",
        domain="general",
        format="warc",
        path=rel(out, path),
        packages=tuple(FAQ_PACKAGES[lang] for lang in FAQ_LANGS),
        licence="Debian FAQ licence (verbatim and modified copies and translations permitted; SPI, 1996-2003)",
        method=(
            f"Every chapter page of the Debian FAQ in {', '.join(FAQ_LANGS)} (`*.LANG.html` from the packages), "
            f"written with warcio as WARC/1.1 `request` + `response` record pairs for URLs under {FAQ_URL}, with "
            "HTTP/1.1 headers (Content-Type, Content-Length, Last-Modified from the file). The stylesheet and one "
            "icon are crawled too (text/css, image/png responses a WARC reader must skip). Record ids are UUIDv5 "
            f"of the URL and every WARC-Date is {CRAWL_DATE}, so the file is reproducible. Documents/bytes count "
            "the HTML responses."
        ),
    )
    built.languages, built.documents, built.text_bytes = languages, documents, text_bytes
    built.disk_bytes = disk_size(path)
    return built


# ---------------------------------------------------------------------------------------------------------------
# Assembly: sources.yaml and SOURCES.md


def rel(out: Path, path: Path) -> str:
    """Path as sources.yaml names it: relative to the corpus directory, wherever this build was written."""
    return path.relative_to(out).as_posix()


def finish(built: Built, docs: Sequence[Doc], path: Path) -> Built:
    built.documents = len(docs)
    built.languages = Counter(d.lang for d in docs)
    built.text_bytes = sum(len(d.text.encode("utf-8")) for d in docs)
    built.disk_bytes = disk_size(path)
    return built


BUILDERS: tuple[Callable[[Path], Built], ...] = (
    build_bible_web_en,
    build_bible_rv1909_es,
    build_fortunes_zh,
    build_jargon_en,
    build_python_docs,
    build_debian_handbook,
    build_manpages,
    build_code,
    build_debian_faq_web,
)


def sources_yaml(built: Sequence[Built]) -> str:
    entries = []
    for b in built:
        entry: dict[str, str] = {"name": b.name, "domain": b.domain, "format": b.format, "path": b.path}
        entry |= {"licence": b.spdx, "attribution": b.attribution, "url": b.homepage}
        if b.text_field:
            entry["text_field"] = b.text_field
        if b.id_field:
            entry["id_field"] = b.id_field
        entries.append(entry)
    header = (
        "# Sources of the bundled demo corpus; the pipeline config includes this list.\n"
        "# Generated by scripts/build_demo_corpus.py: edit the script, not this file.\n"
        "# Paths are relative to this file; see SOURCES.md for provenance and licences.\n"
    )
    return header + yaml.safe_dump(entries, sort_keys=False, allow_unicode=True)


def sources_md(built: Sequence[Built]) -> str:
    total_disk = sum(b.disk_bytes for b in built)
    total_text = sum(b.text_bytes for b in built)
    total_docs = sum(b.documents for b in built)
    lines = [
        "# Demo corpus: sources",
        "",
        "A small corpus of real text, bundled so the whole pipeline (ingest to a tiny trained model) runs offline",
        "in minutes. All text comes from Debian 12 (bookworm) packages; none is generated. Rebuild it with",
        "",
        "```",
        "python scripts/build_demo_corpus.py          # rewrites pretrain_core/data/demo/ from the recorded sources",
        "python scripts/build_demo_corpus.py --check  # rebuilds in a temporary directory and compares bytes",
        "```",
        "",
        "The script reads only the repository: the installed files it uses and what diatheke, groff and dpkg",
        "printed are recorded in `data/reference/demo-sources/` (its README: how to record them again). The script",
        "and those sources fully determine the bytes: samples are chosen by a SHA-1 rank of a fixed seed and the",
        "item's name, gzip headers carry no time, WARC record ids and dates are derived from the URL.",
        "",
        f"Totals: {total_docs:,} documents, {total_text / 1e6:.1f} MB of text, {total_disk / 1e6:.2f} MB on disk.",
        "",
        "| source | domain | format | path | documents | languages | text MB | disk MB |",
        "| --- | --- | --- | --- | ---: | --- | ---: | ---: |",
    ]
    for b in built:
        langs = ", ".join(f"{lang} {n}" for lang, n in sorted(b.languages.items(), key=lambda kv: (-kv[1], kv[0])))
        lines.append(
            f"| {b.name} | {b.domain} | {b.format} | `{b.path}` | {b.documents:,} | {langs} | "
            f"{b.text_bytes / 1e6:.2f} | {b.disk_bytes / 1e6:.2f} |"
        )
    lines += [
        "",
        "Languages of the code source are programming languages (by file name). Text MB counts the UTF-8 text",
        "of the documents (for the WARC, the HTML bodies; for the code tree, every file).",
        "",
    ]
    for b in built:
        versions = ", ".join(f"{p} {package_version(p)}" for p in dict.fromkeys(b.packages))
        lines += [
            f"## {b.name}",
            "",
            f"- Domain / format: {b.domain} / {b.format}, `{b.path}`",
            f"- Debian packages: {versions}",
            f"- Licence: {b.licence}",
            f"- SPDX: `{b.spdx}`; attribution: {b.attribution}; {b.homepage}",
            f"- How the sample was made: {b.method}",
            "",
        ]
    lines += [
        "## Natural near-duplicates",
        "",
        "Left in on purpose, because real corpora have them: untranslated Debian Handbook pages sampled in two",
        "locales (listed above); the PSF licence text, contained both in `code/cpython/LICENSE` and in",
        "python_docs' `license` page; parallel passages of the Bible (2 Kings 18-20 and Isaiah 36-39, Psalms 14",
        "and 53), which share long runs of words (5-gram Jaccard 0.2-0.5) without being copies; a few proverbs",
        "and poems that the fortune files quote twice (inside different pages of fortunes_zh). The FAQ's",
        "chapters in six languages are translations, not duplicates.",
        "",
    ]
    return "\n".join(lines)


def build(out: Path) -> list[Built]:
    """Rebuild every source under `out` (its previous content removed) and write sources.yaml and SOURCES.md."""
    for sub in ("general", "specialist", "text", "code", "web"):
        shutil.rmtree(out / sub, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    built = []
    for builder in BUILDERS:
        result = builder(out)
        print(
            f"{result.name:18} {result.documents:6,} docs {result.text_bytes / 1e6:6.2f} MB text "
            f"{result.disk_bytes / 1e6:5.2f} MB disk  {dict(result.languages)}",
            file=sys.stderr,
        )
        built.append(result)
    (out / "sources.yaml").write_text(sources_yaml(built), encoding="utf-8")
    (out / "SOURCES.md").write_text(sources_md(built), encoding="utf-8")
    return built


def main(argv: Sequence[str] | None = None) -> int:
    return build_or_check(build, DEFAULT_OUT, __doc__, argv, SOURCES)


if __name__ == "__main__":
    sys.exit(main())
