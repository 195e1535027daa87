#!/usr/bin/env python3
"""Build the hand-labelled person-name set: real passages in en, de, fr, zh and ja, every person name in them
listed by a human reader.

Why: the labelled PII set (`scripts/build_labelled_pii.py`) puts generated names into template frames, so it
measures how well the tagger finds names of the kinds it was built for. This set measures precision and recall of
person-name detection on real running text unlike the tagger's training data: Bible chapters (biblical names), the
Jargon File (hackers' names and handles), Python documentation (almost no names: false positives), the Debian
Administrator's Handbook in five languages, and Chinese fortunes (classical Chinese: the Analects, Tang and Song
poems with their poets' names).

Passages are cut from the demo corpus's documents as the pipeline ingests them (`demo_documents` of
`build_labelled_pii.py`): blank-line paragraphs, longer ones cut at line or sentence ends, consecutive paragraphs of
the document's language joined to 120-600 characters; paragraphs that are mostly code, tables or markup break a
passage. A document's language is its source's, or for the handbook the page's locale (the parquet's `lang`
column); a passage is kept only when `sentence_language` agrees. A seeded sample per source and language is
labelled by hand in `annotations.jsonl` (names as written); the build marks every occurrence of each listed
name (whole words only in Latin script) and fails when a listed name is absent or a passage has no entry.

    python scripts/build_labelled_pii_names.py                      # writes data/labelled/pii/names/
    python scripts/build_labelled_pii_names.py --check              # rebuild and compare bytes
    python scripts/build_labelled_pii_names.py --dump-passages F    # sampled passages as JSONL, for labelling
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

import pyarrow.parquet as pq
from build_labelled_pii import demo_documents
from rebuild import build_or_check, gzip_jsonl  # scripts/ is on sys.path when run

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from pretrain_eval.pii_tagger.text_sources import sentence_language  # noqa: E402

DEFAULT_OUT = REPO_ROOT / "data" / "labelled" / "pii" / "names"
HAND_DIR = DEFAULT_OUT  # the hand-written inputs: annotations.jsonl and README.md (its counts are rebuilt)
SET_FILE = "items.jsonl.gz"
SEED = "pretrain-pii-names-v1"
DEV_SHARE = 40  # percent of passages in the dev split
MIN_CHARS, MAX_CHARS = 120, 600
HANDBOOK = REPO_ROOT / "pretrain_core" / "data" / "demo" / "specialist" / "debian_handbook.parquet"
SOURCE_LANG = {"bible_web_en": "en", "jargon_en": "en", "python_docs": "en", "fortunes_zh": "zh"}
QUOTAS = {
    ("bible_web_en", "en"): 60,
    ("debian_handbook", "de"): 45,
    ("debian_handbook", "en"): 25,
    ("debian_handbook", "fr"): 45,
    ("debian_handbook", "ja"): 45,
    ("debian_handbook", "zh"): 30,
    ("fortunes_zh", "zh"): 65,
    ("jargon_en", "en"): 45,
    ("python_docs", "en"): 20,
}
_SYMBOLS = set("{}[]()<>=;_\\|$#@*`~^/:+")
# a line of code, a config file, a table or markup: prompt, directive, comment, rule, aligned columns, brace
_MARKUP_LINE = re.compile(
    r"^(>>>|\.\.\.|\.\. |\$ |# |[;@_|<]|//|/\*|\+-|[-=*~^#+_.:`|]{3,}$)|[^\s.!?:] {2,}\S.*[^\s.!?:] {2,}\S|[{}]$"
)
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z\u00c0-\u024f]")
_LATIN_WORD_CHAR = r"A-Za-z0-9\u00c0-\u024f"


def passage_id(source: str, text: str) -> str:
    return hashlib.sha256(f"{source}\n{text}".encode()).hexdigest()[:12]


def split_of(item_id: str) -> str:
    return "dev" if int(hashlib.sha256(f"{SEED}/{item_id}".encode()).hexdigest(), 16) % 100 < DEV_SHARE else "test"


def documents() -> Iterator[tuple[str, str, str]]:
    """(source, language, text) of the demo documents the set is cut from, sources in sorted order."""
    handbook = pq.read_table(HANDBOOK, columns=["text", "lang"]).to_pydict()
    locale = dict(zip(handbook["text"], handbook["lang"], strict=True))
    for source in sorted({s for s, _ in QUOTAS}):
        for name, text in demo_documents({source}):
            yield name, SOURCE_LANG.get(name) or locale[text], text


def _prose(paragraph: str) -> bool:
    """Running text: not mostly code, a table or markup."""
    chars = [c for c in paragraph if not c.isspace()]
    lines = [line.strip() for line in paragraph.splitlines() if line.strip()]
    if not chars or sum(bool(_MARKUP_LINE.search(line)) for line in lines) > 0.3 * len(lines):
        return False
    return sum(c.isalpha() for c in chars) >= 0.65 * len(chars) and sum(c in _SYMBOLS for c in chars) <= 0.06 * len(
        chars
    )


def _pieces(paragraph: str) -> list[str]:
    """The paragraph, or if it is too long, runs of its lines (or sentences) of at most MAX_CHARS."""
    if len(paragraph) <= MAX_CHARS:
        return [paragraph]
    units = paragraph.splitlines()
    glue = "\n"
    if max(len(u) for u in units) > MAX_CHARS:
        units, glue = [u for u in _SENTENCE_END.split(paragraph.replace("\n", " ")) if u.strip()], " "
    pieces: list[str] = []
    current = ""
    for unit in (u.strip() for u in units):
        if current and len(current) + len(glue) + len(unit) > MAX_CHARS:
            pieces.append(current)
            current = ""
        current = f"{current}{glue}{unit}" if current else unit
    pieces.append(current)
    return [p for p in pieces if len(p) <= MAX_CHARS]


def passages_of(text: str, lang: str) -> Iterator[str]:
    """Runs of consecutive prose paragraphs of `lang`, joined to MIN_CHARS..MAX_CHARS characters."""
    current = ""
    for raw in re.split(r"\n\s*\n", text):
        paragraph = "\n".join(line.rstrip() for line in raw.strip().splitlines())
        found = sentence_language(paragraph)
        if not paragraph or not _prose(paragraph) or (found != lang and (found is not None or len(paragraph) > 80)):
            current = ""  # another language, or text of no clear language longer than a heading: a break
            continue
        for piece in _pieces(paragraph):
            if current and len(current) + 2 + len(piece) > MAX_CHARS:
                current = ""
            current = f"{current}\n\n{piece}" if current else piece
            if len(current) >= MIN_CHARS:
                if sentence_language(current) == lang:
                    yield current
                current = ""


def sampled_passages() -> list[dict[str, str]]:
    """The seeded sample: QUOTAS passages per (source, language), distinct texts, sorted by id."""
    pools: dict[tuple[str, str], list[str]] = {key: [] for key in QUOTAS}
    seen: set[str] = set()
    for source, lang, text in documents():
        for passage in passages_of(text, lang):
            if (source, lang) in pools and passage not in seen:
                seen.add(passage)
                pools[(source, lang)].append(passage)
    chosen = []
    for (source, lang), pool in sorted(pools.items()):
        rng, kept = random.Random(f"{SEED}/{source}/{lang}"), []
        while pool and len(kept) < QUOTAS[(source, lang)]:  # a rejected draw is replaced by a further draw
            drawn = rng.sample(pool, min(QUOTAS[(source, lang)] - len(kept), len(pool)))
            pool = [text for text in pool if text not in drawn]
            kept += [text for text in drawn if _script_fits(text, lang)]
        chosen += [{"id": passage_id(source, t), "lang": lang, "source": source, "text": t} for t in kept]
    return sorted(chosen, key=lambda p: p["id"])


def _script_fits(text: str, lang: str) -> bool:
    """Most letters are CJK in a zh or ja passage, hardly any in the others (drops English text with a CJK
    cross-reference, which `sentence_language` calls ja or zh)."""
    letters = [c for c in text if c.isalpha()]
    cjk = sum(bool(_CJK.match(c)) for c in letters) / len(letters)
    return cjk >= 0.5 if lang in ("zh", "ja") else cjk < 0.05


def name_spans(text: str, names: list[str], item_id: str) -> list[dict[str, object]]:
    """Every occurrence of every name (whole words in Latin script), longer names first, never overlapping."""
    taken: list[tuple[int, int]] = []
    for name in sorted(set(names), key=lambda n: (-len(n), n)):
        if not name or name != name.strip():
            raise ValueError(f"{item_id}: bad name {name!r}")
        pattern = re.escape(name)
        if _LATIN.search(name):
            pattern = rf"(?<![{_LATIN_WORD_CHAR}]){pattern}(?![{_LATIN_WORD_CHAR}])"
        found = [(m.start(), m.end()) for m in re.finditer(pattern, text)]
        if not found:
            raise ValueError(f"{item_id}: annotated name {name!r} does not occur in the passage")
        taken += [(s, e) for s, e in found if not any(s < te and ts < e for ts, te in taken)]
    return [{"start": s, "end": e, "type": "person", "subtype": "hand"} for s, e in sorted(taken)]


def load_annotations(path: Path) -> dict[str, list[str]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    annotations = {row["id"]: list(row["names"]) for row in rows}
    if len(annotations) != len(rows):
        raise ValueError(f"{path}: an id is annotated twice")
    return annotations


def build(out_dir: Path) -> Counter[str]:
    """Write items.jsonl.gz, the annotations (canonical form) and the README (counts rebuilt) into `out_dir`."""
    passages = sampled_passages()
    annotations = load_annotations(HAND_DIR / "annotations.jsonl")
    ids = {p["id"] for p in passages}
    if missing := sorted(ids - annotations.keys()):
        raise ValueError(f"{len(missing)} sampled passages have no annotation, e.g. {missing[:5]}")
    if stale := sorted(annotations.keys() - ids):
        raise ValueError(f"{len(stale)} annotations are for passages no longer sampled, e.g. {stale[:5]}")
    items, counts = [], Counter[str]()
    for p in passages:
        spans = name_spans(p["text"], annotations[p["id"]], p["id"])
        split = split_of(p["id"])
        items.append(
            {
                **p,
                "split": split,
                "domain": "general",
                "code_language": None,
                "kind": "real_names",
                "frame": None,
                "spans": spans,
                "decoys": [],
            }
        )
        for key in (f"{p['lang']}/{split}", f"{p['lang']}/all", f"all/{split}", "all/all"):
            counts[f"passages/{key}"] += 1
            counts[f"named/{key}"] += bool(spans)
            counts[f"spans/{key}"] += len(spans)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / SET_FILE).write_bytes(gzip_jsonl(items))
    canonical = "".join(
        json.dumps({"id": i, "names": annotations[i]}, ensure_ascii=False) + "\n" for i in sorted(annotations)
    )
    (out_dir / "annotations.jsonl").write_text(canonical, encoding="utf-8")
    (out_dir / "README.md").write_text(readme((HAND_DIR / "README.md").read_text(encoding="utf-8"), counts))
    return counts


def readme(hand_written: str, counts: Counter[str]) -> str:
    """The README with its counts table (between the `<!-- counts -->` markers) rebuilt."""
    rows = ["| lang | split | passages | with a name | name spans |", "| --- | --- | ---: | ---: | ---: |"]
    for lang in ("en", "de", "fr", "zh", "ja", "all"):
        for split in ("dev", "test", "all"):
            row = [str(counts[f"{kind}/{lang}/{split}"]) for kind in ("passages", "named", "spans")]
            rows.append(f"| {lang} | {split} | " + " | ".join(row) + " |")
    head, rest = hand_written.split("<!-- counts -->\n", 1)
    return head + "<!-- counts -->\n" + "\n".join(rows) + "\n" + rest[rest.index("<!-- /counts -->") :]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--dump-passages", type=Path)
    args, rest = parser.parse_known_args(argv)
    if args.dump_passages is None:
        return build_or_check(build, DEFAULT_OUT, __doc__, rest)
    lines = "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in sampled_passages())
    args.dump_passages.write_text(lines, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
