#!/usr/bin/env python3
"""Build the language-identification set: labelled snippets of 20 to 1,000 characters cut from real text.

Language id is hardest on short text and on languages that share a script (es/pt/it, de/nl, zh/ja), so the set
holds, for each of 11 languages, snippets in three length buckets (20-50, 50-200 and 200-1,000 characters), cut
from paragraphs of real documents at sentence or word boundaries:

- the demo corpus (pretrain_core/data/demo: Bible chapters, the Jargon File, Python docs, Chinese fortunes, the Debian
  handbook, FAQ and manual pages in en, de, fr, es, ru, zh, ja), taken first;
- translated manual pages shipped rendered in data/reference/manpages-l10n (the only source for
  it, pt, nl and most of ko; more pages for de, fr, ja, ru, zh), rendered with groff like the demo corpus's pages
  but without hyphenation;
- the Korean texts of data/reference/cjkencodings.

A snippet's label is the language of the document it comes from, confirmed on the whole paragraph it is cut from
(translations are often partial): for Latin and Cyrillic languages the paragraph must hold at least three distinct
function words of that language and more than of any other language of the set; for zh/ja/ko most letters must be
in the language's script (and ja needs kana, zh none). Nothing in the snippet itself may speak against the label:
no more function words of another language than of its own, for zh/ja/ko at least half its words in its script,
and a snippet of 200 characters or more must pass the paragraph test itself. Snippets must read as prose (mostly
plain words, few options, paths or markup). Candidates are ranked by a keyed SHA-1 of their origin, at most three
per document and bucket, so the same inputs give byte-identical files; `--check` rebuilds into a temporary
directory and compares. A keyed hash also marks 30% of the snippets "dev": the only ones looked at while tuning.

    python scripts/build_labelled_langid.py          # writes data/labelled/langid/
    python scripts/build_labelled_langid.py --check  # rebuild and compare bytes
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import re
import sys
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq
import zstandard
from rebuild import build_or_check  # scripts/rebuild.py: scripts/ is on sys.path when run

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from pretrain_core.ingest.config import IngestConfig, SourceConfig  # noqa: E402
from pretrain_core.ingest.stage import ingest_files  # noqa: E402

DEMO = REPO_ROOT / "pretrain_core" / "data" / "demo"
REFERENCE = REPO_ROOT / "data" / "reference"
DEFAULT_OUT = REPO_ROOT / "data" / "labelled" / "langid"
SET_FILE = "snippets.jsonl"
SEED = "pretrain-langid-v1"
# Translated manual pages (Debian 12's manpages-l10n and others), rendered once like the demo corpus's and shipped,
# so the set is rebuilt from the repository alone (data/reference/manpages-l10n/README.md).
RENDERED_MANPAGES = REFERENCE / "manpages-l10n" / "rendered.jsonl.gz"

# (name, lowest length, highest length), inclusive; the evaluator reads the bucket of each snippet.
BUCKETS = (("20-50", 20, 49), ("50-200", 50, 199), ("200+", 200, 1000))
PER_BUCKET = {"20-50": 120, "50-200": 120, "200+": 100}
PER_DOCUMENT = 3  # snippets per document and bucket, so one long document cannot fill a bucket
DEV_SHARE = 0.3  # share of snippets marked "dev": the only ones looked at while tuning the detector

FUNCTION_WORDS = {
    "en": "the and of to is in that for with are this be not or you it by from on as which can",
    "de": "der die das und ist nicht ein eine mit den auf für von sich auch werden wird dem des oder zu im bei",
    "fr": "le la les et est des une du pour dans que qui sur pas par au aux avec ce cette sont vous ou",
    "es": "el la los las y es que en un una por con para del se no al lo su como está o pero",
    "it": "il lo la gli le e è di che un una per con non del della dei delle sono nel nella questo si",
    "pt": "o a os as e é de que um uma para com não do da dos das em no na por se são ao",
    "nl": "de het een en is van dat niet met voor op zijn wordt worden te deze die bij als of naar ook",
    "ru": "и в не на что с по это как для из от или к то так при если будет быть",
}
FUNCTION_WORD_SETS = {lang: frozenset(words.split()) for lang, words in FUNCTION_WORDS.items()}
MIN_FUNCTION_WORDS = 3
LONG_SNIPPET = 200  # characters: long enough to be confirmed like a paragraph
CJK_LANGUAGES = {"zh", "ja", "ko"}

WORD = re.compile(r"[^\W\d_]+")
SENTENCE_END = re.compile(r"[.!?](?=\s)|[。！？]")
CJK_PAUSE = re.compile(r"[，、；：,;:]")
OPTION = re.compile(r"-+\w")  # a command-line option such as -l or --verbose
MARKUP = re.compile(r"[/\\=<>{}\[\]_@|`*#$%^~]|--|\.\w|::|\w\(\)")
SOFT_HYPHEN_BREAK = "\u2010"  # groff's hyphen at a line break


@dataclass(frozen=True)
class Document:
    demo: bool  # from the shipped demo corpus or reference text, taken before text found on this machine
    source: str
    origin: str  # file, file:row or URL: where a reader finds the document
    lang: str
    text: str


@dataclass(frozen=True)
class Snippet:
    demo: bool
    lang: str
    bucket: str
    source: str
    origin: str
    text: str
    rank: str


def rank(key: str) -> str:
    """A stable pseudo-random order key: a choice stays when unrelated inputs change."""
    return hashlib.sha1(f"{SEED}:{key}".encode()).hexdigest()


# -- sources -------------------------------------------------------------------------------------------------------


def demo_documents() -> Iterator[Document]:
    """Prose of the demo corpus with the language each source records (code left out)."""
    for name in ("bible_web_en", "bible_rv1909_es", "fortunes_zh"):
        with gzip.open(DEMO / "general" / f"{name}.jsonl.gz", "rt", encoding="utf-8") as lines:
            yield from _records(name, lines.read())
    raw = zstandard.ZstdDecompressor().stream_reader(
        io.BytesIO((DEMO / "general" / "jargon_en.jsonl.zst").read_bytes())
    )
    yield from _records("jargon_en", raw.read().decode("utf-8"))
    for name in ("python_docs", "debian_handbook"):
        table = pq.read_table(DEMO / "specialist" / f"{name}.parquet", columns=["id", "lang", "text"])
        for row in table.to_pylist():
            yield Document(True, name, f"{name}:{row['id']}", _base_language(row["lang"]), row["text"])
    for path in sorted((DEMO / "text" / "manpages").rglob("*.txt")):
        lang_dir = path.relative_to(DEMO / "text" / "manpages").parts[0]
        yield Document(
            True, "manpages", path.relative_to(REPO_ROOT).as_posix(), _base_language(lang_dir), path.read_text()
        )
    yield from faq_documents()


def _records(source: str, jsonl: str) -> Iterator[Document]:
    for line in jsonl.splitlines():
        row = json.loads(line)
        yield Document(True, source, f"{source}:{row['id']}", _base_language(row["lang"]), row["text"])


def faq_documents() -> Iterator[Document]:
    """The Debian FAQ pages of the demo WARC, as the pipeline's ingest extracts them; language from the URL."""
    source = SourceConfig(name="debian_faq_web", domain="general", format="warc", path=str(DEMO / "web"))
    kept = ingest_files([str(DEMO / "web" / "debian_faq.warc.gz")], source, IngestConfig())[0].kept
    for location, text in zip(kept.column("location").to_pylist(), kept.column("text").to_pylist(), strict=True):
        url = location.split(" ", 1)[1]
        match = re.search(r"\.([a-z]{2}(?:-[a-z]{2})?)\.html$", url)
        if match:
            yield Document(True, "debian_faq_web", url, _base_language(match.group(1)), text)


def shipped_manpages() -> Iterator[Document]:
    """Translated manual pages the repository ships rendered (left-adjusted, 78 columns, as the demo corpus's)."""
    with gzip.open(RENDERED_MANPAGES, "rt", encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            yield Document(False, record["source"], record["origin"], record["lang"], record["text"])


def korean_reference() -> Iterator[Document]:
    """CPython's Korean codec test texts (three encodings of the same two texts; duplicates fall out later)."""
    for path in sorted((REFERENCE / "cjkencodings").glob("*kr*-utf8.txt")):
        yield Document(True, "cjkencodings", path.relative_to(REPO_ROOT).as_posix(), "ko", path.read_text())


def _base_language(code: str) -> str:
    return code.replace("_", "-").split("-")[0].lower()


# -- paragraphs and labels -----------------------------------------------------------------------------------------


def paragraphs(text: str) -> Iterator[str]:
    """Blocks of running text as one line each: a block ends at a blank line, where the indentation changes
    (a manual page's heading or option tag) or at a wide gap inside a line (a tag and its text side by side).
    CJK lines are joined without the space a renderer's wrap would otherwise leave."""
    block: list[str] = []
    indent = -1
    for line in unicodedata.normalize("NFC", text).splitlines():
        stripped = line.lstrip()
        column = len(line) - len(stripped)
        pieces = re.split(r"\s{3,}", stripped.rstrip()) if stripped else []
        if not pieces or column != indent or len(pieces) > 1:
            yield from _joined(block)
            block = []
        if pieces:
            for piece in pieces[:-1]:
                yield from _joined([piece])
            block.append(pieces[-1])
            indent = len(line.rstrip()) - len(pieces[-1]) if len(pieces) > 1 else column
    yield from _joined(block)


def _joined(lines: list[str]) -> Iterator[str]:
    joined = ""
    for line in lines:
        line = " ".join(line.split())
        if joined.endswith(SOFT_HYPHEN_BREAK) and line[0].islower():
            joined = joined[: -len(SOFT_HYPHEN_BREAK)]  # a word the renderer hyphenated at the line end
        elif joined and not (_is_cjk(joined[-1]) and _is_cjk(line[0])):
            joined += " "
        joined += line
    if len(joined) >= BUCKETS[0][1]:
        yield joined


def _is_cjk(char: str) -> bool:
    return _script(char) in {"han", "kana", "hangul"} or "\u3000" <= char <= "\u303f" or "\uff00" <= char <= "\uffef"


def _script(char: str) -> str:
    if not char.isalpha():
        return "other"
    name = unicodedata.name(char, "")
    if name.startswith("CJK UNIFIED") or name.startswith("CJK COMPATIBILITY IDEOGRAPH"):
        return "han"
    if name.startswith(("HIRAGANA", "KATAKANA")):
        return "kana"
    if name.startswith("HANGUL"):
        return "hangul"
    if name.startswith("CYRILLIC"):
        return "cyrillic"
    if name.startswith("LATIN"):
        return "latin"
    return "other"


def confirms(paragraph: str, lang: str) -> bool:
    """Whether the paragraph as a whole is written in `lang` (so untranslated passages are left out)."""
    scripts = Counter(_script(c) for c in paragraph if c.isalpha())
    letters = sum(scripts.values())
    if not letters:
        return False
    if lang in CJK_LANGUAGES:
        if lang == "ko":
            return scripts["hangul"] >= 0.6 * letters
        cjk = scripts["han"] + scripts["kana"]
        if lang == "zh":
            return scripts["kana"] == 0 and scripts["hangul"] == 0 and scripts["han"] >= 0.7 * letters
        return scripts["kana"] > 0 and cjk >= 0.6 * letters
    votes = _function_word_votes(paragraph)
    mine = votes.pop(lang)
    return mine >= MIN_FUNCTION_WORDS and all(mine > theirs for theirs in votes.values())


def consistent(snippet: str, lang: str) -> bool:
    """Whether nothing in the snippet itself speaks against its label: paragraphs mix languages at times (an
    English sentence left in a translation, a Japanese line quoting English), so a snippet must not hold more
    function words of another language than of its own, and a CJK snippet must be mostly its own script; a snippet
    of LONG_SNIPPET characters or more must pass the paragraph test itself."""
    if len(snippet) >= LONG_SNIPPET:
        return confirms(snippet, lang)
    if lang in CJK_LANGUAGES:
        own = {"zh": {"han"}, "ja": {"han", "kana"}, "ko": {"hangul"}}[lang]
        words = _script_words(snippet)
        return (lang != "zh" or not words["kana"]) and 2 * sum(words[s] for s in own) >= sum(words.values())
    votes = _function_word_votes(snippet)
    return votes[lang] >= max(votes.values())


def _function_word_votes(text: str) -> dict[str, int]:
    words = {w.lower() for w in WORD.findall(text)}
    return {lang: len(words & function_words) for lang, function_words in FUNCTION_WORD_SETS.items()}


def _script_words(text: str) -> Counter[str]:
    """Words per script: a run of letters of one script is one word, every Han or kana character is one."""
    words: Counter[str] = Counter()
    previous = ""
    for char in text:
        script = _script(char) if char.isalpha() else ""
        if script and (script != previous or script in {"han", "kana"}):
            words[script] += 1
        previous = script
    return words


def reads_as_prose(snippet: str, lang: str) -> bool:
    """Mostly plain words: options, paths, markup and tables carry no language of their own (one in 100 chars)."""
    if len(MARKUP.findall(snippet)) > len(snippet) // 100:
        return False
    if lang in CJK_LANGUAGES:
        visible = [c for c in snippet if not c.isspace()]
        return sum(c.isalpha() for c in visible) >= 0.6 * len(visible)
    tokens = snippet.split()
    plain = sum(1 for t in tokens if not OPTION.match(t) and t.strip(".,;:!?()\"'“”‘’«»„¿¡…-").isalpha())
    return len(tokens) >= 3 and plain >= 0.75 * len(tokens)


# -- cutting -------------------------------------------------------------------------------------------------------


def cut(paragraph: str, lang: str, bucket: tuple[str, int, int], key: str) -> str | None:
    """A snippet of the bucket's length from a sentence start, ending at a sentence end or word boundary."""
    _, low, high = bucket
    starts = [0] + [m.end() for m in SENTENCE_END.finditer(paragraph)]
    starts = [s for s in dict.fromkeys(_skip_space(paragraph, s) for s in starts) if len(paragraph) - s >= low]
    if not starts:
        return None
    digest = int(rank(key), 16)
    start = starts[digest % len(starts)]
    target = low + (digest // len(starts)) % (high - low + 1)
    rest = paragraph[start:]
    snippet = rest if len(rest) <= target else _cut_at_boundary(rest, low, target, lang in CJK_LANGUAGES) or ""
    snippet = snippet.strip()
    return snippet if low <= len(snippet) <= high else None


def _skip_space(text: str, index: int) -> int:
    while index < len(text) and text[index].isspace():
        index += 1
    return index


def _cut_at_boundary(text: str, low: int, target: int, unspaced: bool) -> str | None:
    window = text[: target + 1]
    ends = [m.end() for m in SENTENCE_END.finditer(window) if m.end() >= low]
    if ends:
        return text[: ends[-1]]
    if unspaced:
        pauses = [m.end() for m in CJK_PAUSE.finditer(window) if m.end() >= low]
        return text[: pauses[-1] if pauses else target]
    space = text.rfind(" ", low, target + 1)
    return text[:space] if space >= low else None


# -- selection -----------------------------------------------------------------------------------------------------


def candidates(documents: Sequence[Document]) -> dict[tuple[str, str], list[Snippet]]:
    """Per (language, bucket): one snippet per confirmed paragraph that yields one; shipped text first, then by rank."""
    found: dict[tuple[str, str], list[Snippet]] = defaultdict(list)
    for doc in documents:
        for index, paragraph in enumerate(paragraphs(doc.text)):
            if not confirms(paragraph, doc.lang):
                continue
            for bucket in BUCKETS:
                key = f"{doc.origin}#{index}:{bucket[0]}"
                snippet = cut(paragraph, doc.lang, bucket, key)
                if snippet and reads_as_prose(snippet, doc.lang) and consistent(snippet, doc.lang):
                    found[doc.lang, bucket[0]].append(
                        Snippet(doc.demo, doc.lang, bucket[0], doc.source, doc.origin, snippet, rank(key))
                    )
    for pool in found.values():
        pool.sort(key=lambda s: (not s.demo, s.rank, s.origin))
    return found


def select(pool: list[Snippet], wanted: int) -> list[Snippet]:
    """The first `wanted` snippets by rank, at most PER_DOCUMENT per document, no text twice."""
    taken: list[Snippet] = []
    per_document: Counter[str] = Counter()
    texts: set[str] = set()
    for snippet in pool:
        if len(taken) == wanted:
            break
        if per_document[snippet.origin] >= PER_DOCUMENT or snippet.text in texts:
            continue
        taken.append(snippet)
        per_document[snippet.origin] += 1
        texts.add(snippet.text)
    return taken


def build(out: Path) -> None:
    documents = [*demo_documents(), *shipped_manpages(), *korean_reference()]
    pools = candidates(documents)
    rows = []
    for lang in sorted({lang for lang, _ in pools}):
        for name, _, _ in BUCKETS:
            chosen = select(pools.get((lang, name), []), PER_BUCKET[name])
            if len(chosen) < PER_BUCKET[name]:
                print(f"warning: {lang} {name}: only {len(chosen)} snippets", file=sys.stderr)
            for n, snippet in enumerate(chosen):
                split = "dev" if int(rank(f"split:{snippet.text}"), 16) % 1000 < DEV_SHARE * 1000 else "test"
                rows.append(
                    {
                        "id": f"{lang}-{name.replace('+', 'p')}-{n:03d}",
                        "lang": lang,
                        "bucket": name,
                        "chars": len(snippet.text),
                        "split": split,
                        "source": snippet.source,
                        "origin": snippet.origin,
                        "text": snippet.text,
                    }
                )
    out.mkdir(parents=True, exist_ok=True)
    lines = "".join(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n" for row in rows)
    (out / SET_FILE).write_text(lines, encoding="utf-8")
    (out / "README.md").write_text(readme(rows), encoding="utf-8")


def readme(rows: list[dict[str, object]]) -> str:
    counts: Counter[tuple[str, str]] = Counter((str(r["lang"]), str(r["bucket"])) for r in rows)
    sources: Counter[tuple[str, str]] = Counter((str(r["lang"]), str(r["source"])) for r in rows)
    languages = sorted({lang for lang, _ in counts})
    table = [
        "| language | " + " | ".join(name for name, _, _ in BUCKETS) + " | sources |",
        "| --- |" + " ---: |" * 3 + " --- |",
    ]
    for lang in languages:
        per_source = ", ".join(f"{s} {n}" for (lg, s), n in sorted(sources.items()) if lg == lang)
        table.append(
            f"| {lang} | " + " | ".join(str(counts[lang, name]) for name, _, _ in BUCKETS) + f" | {per_source} |"
        )
    dev = sum(1 for r in rows if r["split"] == "dev")
    return README_TEMPLATE.format(
        total=len(rows), languages=len(languages), dev=dev, per_document=PER_DOCUMENT, table="\n".join(table)
    )


README_TEMPLATE = """\
# Language-identification set

{total} snippets of 20 to 1,000 characters in {languages} languages, each labelled with its language, in three
length buckets (20-50, 50-200 and 200+ characters). `snippets.jsonl` holds one JSON object a line: `id`, `lang`
(ISO 639-1), `bucket`, `chars`, `split` (`dev`: the {dev} snippets looked at while tuning the detector; `test`: the
rest), `source`, `origin` (where the document is) and `text`.

Rebuild with `python scripts/build_labelled_langid.py` (`--check` compares a rebuild with these files); the
script's docstring explains the method. In short: paragraphs of real documents, confirmed to be in the document's
language (function words for Latin and Cyrillic languages, script letters for zh, ja and ko: translations are often
partial) and not contradicted by the snippet itself, cut from a sentence start to a sentence end or word boundary
at a length drawn by a keyed SHA-1, kept only when they read as prose; at most {per_document} snippets per document
and bucket. Shipped text (the demo corpus, data/reference) is taken first, the shipped rendered manual pages fill up.

{table}

## Sources and licences

- Demo corpus (`pretrain_core/data/demo`, see its `SOURCES.md`): World English Bible and Reina-Valera 1909 (public
  domain), the Jargon File (public domain), Python 3.11 documentation (PSF-2.0), Chinese fortunes (GPL-3+, classical
  texts public domain), The Debian Administrator's Handbook (GPL-2+ or CC-BY-SA-3.0), the Debian FAQ (GPL-2+),
  manual pages (GPL-2+, GPL-3+, GFDL-1.2+, BSD, MIT and the Linux man-pages licence, per page).
- Manual pages of Debian 12's translations, up to 150 a language (data/reference/manpages-l10n), rendered with
  `groff -k -Tutf8 -mandoc -rLL=78n -rcR=1 -rHY=0 -P-cbou` after `.ad l`/`.nh`: the translations of manpages-de,
  manpages-fr, manpages-ru, manpages-es (GPL-3+), manpages-ja (the original pages' licences), manpages-zh
  (GFDL-1.2+/GPL-2+), and those shipped by dpkg, dpkg-dev, apt, man-db, adduser, debianutils, fakeroot, psmisc,
  procps, sensible-utils (GPL-2+), passwd and login (shadow, BSD-3-Clause), vim and xxd (Vim licence), xz-utils
  (public domain) and libsemanage (LGPL-2.1+). The `origin` of such a snippet is the page's path.
- Korean texts of CPython's codec tests (`data/reference/cjkencodings`, PSF-2.0).
"""


def main(argv: Sequence[str] | None = None) -> int:
    return build_or_check(build, DEFAULT_OUT, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
