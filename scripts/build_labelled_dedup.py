#!/usr/bin/env python3
"""Rebuild data/labelled/dedup/: real documents, edited copies of them at controlled rates, and hard negatives,
every pair labelled with its true Jaccard similarity on the shingles the dedup stage uses.

Groups of documents, each from one real passage or document of the demo corpus (pretrain_core/data/demo, read by the
pipeline's own ingestion) or of data/reference (licences, vim tutors):

- edit pairs: a passage and a copy edited by one kind of change (word or, for text written without spaces,
  character substitutions, insertions, deletions; reordered paragraphs; added header and footer lines;
  whitespace and case changes; or a mix of all). The amount of editing is searched so that the pair's Jaccard
  lands on a target drawn uniformly from [0.4, 1.0], so both dedup thresholds (0.8 and 0.7) are exercised.
- chains: four successive revisions of a passage, each with words (or characters) substituted, inserted and deleted
  in the one before (Jaccard 0.82-0.93 between neighbours), so the first and last are far apart: clustering must
  not chain them together.
- templates: two different documents of one source with as much in common as that source offers (manual pages
  with the same headings and footers, licences of one family, glossary entries of one format, parallel Bible
  chapters, translated or untranslated handbook pages): the hard negatives.

Every pair inside a group is labelled. So is every other pair of the whole set whose Jaccard reaches
COMPLETE_ABOVE (kind "incidental", found by an exact all-pairs count): a pair missing from pairs.jsonl is
known to be below it, so precision can be measured over every pair a system puts together.

Deterministic: passages are chosen by a keyed SHA-1 rank, every random choice comes from a generator seeded by
the group's name, files are written in a fixed order, gzip headers carry no time. ``--check`` rebuilds into a
temporary directory and compares bytes.

    python scripts/build_labelled_dedup.py            # rewrites data/labelled/dedup/
    python scripts/build_labelled_dedup.py --check
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
import re
import sys
import textwrap
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rebuild import build_or_check  # scripts/rebuild.py: scripts/ is on sys.path when run
from scipy import sparse

from pretrain_core.config import load_config
from pretrain_core.dedup.normalize import normalize_texts
from pretrain_core.dedup.shingles import ShingleSets, char_shingled
from pretrain_core.ingest.config import IngestConfig
from pretrain_core.ingest.listing import list_source_files
from pretrain_core.ingest.stage import ingest_files
from pretrain_eval.stage_quality.dedup import (
    COMPLETE_ABOVE,
    DOCUMENTS_FILE,
    PAIRS_FILE,
    default_dedup_config,
    stage_shingles,
)

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "data" / "labelled" / "dedup"
REFERENCE = REPO_ROOT / "data" / "reference"
SEED = "pretrain-dedup-labelled-v1"

# Edit pairs and chains per source (one passage each), and template pairs per source.
EDIT_PAIRS = {
    "bible_web_en": 90,
    "bible_rv1909_es": 80,
    "fortunes_zh": 110,
    "jargon_en": 90,
    "python_docs": 110,
    "debian_handbook": 110,
    "manpages": 150,
    "code": 70,
    "debian_faq_web": 120,
    "vim_tutor": 60,
}
CHAINS = {"bible_web_en": 5, "fortunes_zh": 5, "jargon_en": 5, "python_docs": 5, "debian_handbook": 5,
          "manpages": 5, "code": 5, "debian_faq_web": 5}  # fmt: skip
TEMPLATE_PAIRS = {
    "manpages": 60,
    "jargon_en": 50,
    "python_docs": 25,
    "debian_handbook": 20,
    "debian_faq_web": 30,
    "bible_web_en": 20,
    "bible_rv1909_es": 15,
    "fortunes_zh": 15,
    "code": 10,
    "licences": 7,
}
EDIT_KINDS = ["substitute"] * 3 + ["insert"] * 2 + ["delete"] * 2 + ["reorder", "format"] + ["boilerplate"] * 2
EDIT_KINDS += ["mixed"] * 3
CHAIN_VERSIONS = 4
TARGET_RANGE = (0.4, 1.0)
CHAIN_STEP_RANGE = (0.82, 0.93)
MAX_TEMPLATE_CHARS = {"licences": 40_000}  # whole licences, however long; other sources' documents up to:
MAX_DOCUMENT_CHARS = 12_000
MIN_SHINGLES = 30
PIECE_CHARS = {False: (400, 1500, 3000), True: (250, 700, 1500)}  # word / char text: shortest, target, longest


@dataclass(frozen=True)
class SourceDoc:
    source: str
    domain: str
    location: str
    text: str


@dataclass(frozen=True)
class Doc:
    id: str
    group: str
    kind: str
    source: str
    domain: str
    location: str
    text: str


@dataclass(frozen=True)
class Group:
    name: str
    kind: str
    docs: list[Doc]
    edit_rate: float | None = None  # units changed per unit of the original (edit pairs only)


def rank(*parts: object) -> str:
    """A keyed SHA-1 rank: adding an item elsewhere never reshuffles the others."""
    return hashlib.sha1(":".join([SEED, *map(str, parts)]).encode()).hexdigest()


# ---- real text ---------------------------------------------------------------------------------------------


def read_sources() -> list[SourceDoc]:
    """The demo corpus as ingestion hands it on, then the reference licences and vim tutors."""
    docs: list[SourceDoc] = []
    for source in load_config().sources:
        kept = ingest_files([f.url for f in list_source_files(source)], source, IngestConfig())[0].kept
        for text, location in zip(kept["text"].to_pylist(), kept["location"].to_pylist(), strict=True):
            docs.append(SourceDoc(source.name, source.domain, location, text))
    for folder, name in (("licences", "licences"), ("vim-tutor", "vim_tutor")):
        for path in sorted((REFERENCE / folder).iterdir()):
            location = f"data/reference/{folder}/{path.name}"
            docs.append(SourceDoc(name, "general", location, path.read_text(encoding="utf-8")))
    return docs


def boilerplate_blocks(docs: Sequence[SourceDoc]) -> list[list[str]]:
    """Real header and footer blocks: the closing lines of English manual pages (see also, bug reports,
    copyright, page footer) and the paragraphs of the notices licences ask to put at the top of every file."""
    blocks: list[list[str]] = []
    for doc in docs:
        if doc.source == "manpages" and doc.location.startswith("en/"):
            blocks.append([line.rstrip() for line in doc.text.rstrip().splitlines()[-8:] if line.strip()])
        if doc.source == "licences" and "How to Apply" in doc.text:
            notice = doc.text[doc.text.index("How to Apply") :]
            blocks += [p.strip().splitlines() for p in re.split(r"\n[ \t]*\n", notice) if len(p.strip()) >= 40]
    return blocks


def pieces(text: str, by_char: bool) -> Iterator[str]:
    """Paragraph-aligned passages of about the target size; a short whole document is one passage."""
    shortest, target, longest = PIECE_CHARS[by_char]
    blocks: list[str] = []
    for paragraph in re.split(r"\n[ \t]*\n", text.strip()):
        if len(paragraph) <= longest:
            blocks.append(paragraph)
            continue
        lines = paragraph.split("\n")
        step = max(1, len(lines) * target // len(paragraph))
        blocks.extend("\n".join(lines[i : i + step]) for i in range(0, len(lines), step))
    piece: list[str] = []
    size = 0
    for block in blocks:
        piece.append(block)
        size += len(block) + 2
        if size >= target:
            if size <= longest:
                yield "\n\n".join(piece)
            piece, size = [], 0
    if piece and shortest <= size <= longest:
        yield "\n\n".join(piece)


# ---- edits -------------------------------------------------------------------------------------------------


class Editable:
    """A text as units that edits replace, insert or delete: words with their trailing whitespace, or single
    characters for text the stage shingles by character. Donor units come from another passage of the source;
    header and footer lines are added from the top of the given boilerplate."""

    def __init__(self, text: str, donor: str, by_char: bool, header: Sequence[str], footer: Sequence[str]) -> None:
        self.by_char = by_char
        self.header, self.footer = header, footer
        if by_char:
            self.lead, self.units = "", list(text)
            self.donor = [c for c in donor if not c.isspace()]
        else:
            self.lead = text[: len(text) - len(text.lstrip())]
            self.units = re.findall(r"\S+\s*", text)
            self.donor = donor.split()

    def apply(self, ops: Sequence[Op]) -> str:
        units = list(self.units)
        headers = footers = 0
        for op in ops:
            at = int(op.where * len(units))
            taken = self._donor_run(op.source, op.run)
            if op.kind == "boilerplate":
                headers += op.where < 0.5
                footers += op.where >= 0.5
            elif op.kind == "substitute":
                for k, new in enumerate(taken[: len(units) - at]):
                    units[at + k] = new + units[at + k][len(units[at + k].rstrip()) :]
            elif op.kind == "insert":
                units[at:at] = [w if self.by_char else w + " " for w in taken]
            elif op.kind == "delete" and len(units) > op.run:
                del units[at : at + op.run]
        body = self.lead + "".join(units)
        return "\n".join([*self.header[:headers], body, *self.footer[:footers]])

    def first(self, ops: Sequence[Op]) -> Callable[[int], str]:
        """The text after the first n of ``ops``, as a function of n."""
        return lambda n: self.apply(ops[:n])

    def _donor_run(self, source: float, run: int) -> list[str]:
        start = int(source * max(1, len(self.donor) - run))
        return self.donor[start : start + run] or ["x"]

    def __len__(self) -> int:
        return len(self.units)


@dataclass(frozen=True)
class Op:
    kind: str  # substitute, insert, delete, boilerplate (a header line when where < 0.5, else a footer line)
    where: float  # position as a share of the current length
    run: int  # units replaced, inserted or deleted
    source: float  # where the donor run starts, as a share of the donor's length


def boilerplate_for(rng: random.Random, blocks: Sequence[list[str]]) -> tuple[list[str], list[str]]:
    """Header and footer lines: the blocks from a random one on, as many as any edit may need."""

    def lines() -> list[str]:
        start = rng.randrange(len(blocks))
        return [line for block in [*blocks[start:], *blocks[:start]] for line in block]

    return lines(), lines()


def unit_ops(rng: random.Random, kinds: Sequence[str], count: int, by_char: bool) -> list[Op]:
    """``count`` edits of the given kinds at random places; runs from single units to a sentence's length."""
    scale = 2 if by_char else 1  # about two CJK characters to a word
    runs = {
        "substitute": [1, 1, 1, 2, 2, 3, 4, 6, 8, 12],
        "insert": [1, 2, 3, 5, 8, 12, 20, 30],
        "delete": [1, 2, 3, 5, 8, 12, 20],
        "boilerplate": [1],
    }
    ops = []
    for _ in range(count):
        kind = rng.choice(kinds)
        ops.append(Op(kind, rng.random(), rng.choice(runs[kind]) * scale, rng.random()))
    return ops


def reorder(text: str, rng: random.Random, moves: int) -> str:
    """Move ``moves`` paragraphs (lines, when there are fewer than three paragraphs) to other places."""
    paragraphs = re.split(r"\n[ \t]*\n", text)
    separator = "\n\n"
    if len(paragraphs) < 3:
        paragraphs, separator = text.split("\n"), "\n"
    for _ in range(moves):
        if len(paragraphs) < 2:
            break
        moved = paragraphs.pop(rng.randrange(len(paragraphs)))
        paragraphs.insert(rng.randrange(len(paragraphs) + 1), moved)
    return separator.join(paragraphs)


def reformat(text: str, rng: random.Random, by_char: bool) -> str:
    """Whitespace and case changes of the kind two renderings of one page differ by: re-wrapped lines (word
    text only: in text without spaces a new line break inserts a separator), indentation, CRLF line ends,
    doubled blank lines, an upper-cased first line or a lower-cased text."""
    if not by_char and rng.random() < 0.6:
        width = rng.randrange(40, 100)
        text = "\n\n".join(
            textwrap.fill(" ".join(p.split()), width, break_long_words=False, break_on_hyphens=False)
            for p in re.split(r"\n[ \t]*\n", text)
        )
    if rng.random() < 0.5:
        text = "\n".join(("\t" if rng.random() < 0.5 else "    ") + line for line in text.split("\n"))
    if rng.random() < 0.4:
        text = text.replace("\n\n", "\n\n\n")
    case = rng.randrange(3)
    if case == 0:
        first, _, rest = text.partition("\n")
        text = first.upper() + "\n" + rest
    elif case == 1:
        text = text.lower()
    if rng.random() < 0.4:
        text = text.replace("\n", "\r\n")
    return text


# ---- similarity --------------------------------------------------------------------------------------------


def overlap(a: str, b: str) -> tuple[int, int]:
    """Shared shingles and union size of two texts, on the stage's own normalisation and shingling."""
    sets = stage_shingles([a, b], default_dedup_config())
    return sets.overlap(0, 1)


def jaccard(a: str, b: str) -> float:
    shared, union = overlap(a, b)
    return shared / union if union else 0.0


def edited_to_target(original: str, edit: Callable[[int], str], most: int, target: float) -> tuple[int, str]:
    """The fewest edits (1 to ``most``) that take the copy's Jaccard with ``original`` to ``target`` or below,
    or one fewer when that lands closer; with the edited text. Jaccard falls about monotonically with edits."""
    low, high = 1, most
    while low < high:
        middle = (low + high) // 2
        if jaccard(original, edit(middle)) <= target:
            high = middle
        else:
            low = middle + 1
    if low > 1 and abs(jaccard(original, edit(low - 1)) - target) < abs(jaccard(original, edit(low)) - target):
        low -= 1
    return low, edit(low)


# ---- groups ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Passage:
    source: SourceDoc
    text: str
    by_char: bool


def make_doc(group: str, role: str, kind: str, passage: Passage, text: str) -> Doc:
    source = passage.source
    return Doc(f"{group}/{role}", group, kind, source.source, source.domain, source.location, text)


def edit_pair(name: str, kind: str, passage: Passage, donor: Passage, blocks: Sequence[list[str]]) -> Group:
    """A passage and its copy edited by ``kind`` to a Jaccard target drawn from TARGET_RANGE."""
    rng = random.Random(rank(name))
    target = rng.uniform(*TARGET_RANGE)
    original = passage.text
    if kind == "reorder":
        edited, rate = reorder(original, rng, rng.randint(1, 3)), 0.0
    elif kind == "format":
        edited, rate = reformat(original, rng, passage.by_char), 0.0
    else:
        editable = Editable(original, donor.text, passage.by_char, *boilerplate_for(rng, blocks))
        kinds = {"mixed": ["substitute", "insert", "delete", "boilerplate"]}.get(kind, [kind])
        ops = unit_ops(rng, kinds, len(editable), passage.by_char)
        moves, layout_seed = rng.randint(0, 1), rng.random()

        def edit(n: int) -> str:
            text = editable.apply(ops[:n])
            if kind == "mixed":
                layout = random.Random(layout_seed)
                text = reformat(reorder(text, layout, moves), layout, passage.by_char)
            return text

        count, edited = edited_to_target(original, edit, len(ops), target)
        rate = sum(op.run for op in ops[:count]) / max(1, len(editable))
    docs = [make_doc(name, "a", kind, passage, original), make_doc(name, "b", kind, passage, edited)]
    return Group(name, kind, docs, round(rate, 4))


def chain(name: str, passage: Passage, donor: Passage) -> Group:
    """CHAIN_VERSIONS revisions of a passage, each with words substituted, inserted and deleted in the previous."""
    rng = random.Random(rank(name))
    texts = [passage.text]
    for _ in range(CHAIN_VERSIONS - 1):
        editable = Editable(texts[-1], donor.text, passage.by_char, [], [])
        ops = unit_ops(rng, ["substitute", "insert", "delete"], len(editable), passage.by_char)
        target = rng.uniform(*CHAIN_STEP_RANGE)
        texts.append(edited_to_target(texts[-1], editable.first(ops), len(ops), target)[1])
    return Group(name, "chain", [make_doc(name, f"v{i}", "chain", passage, t) for i, t in enumerate(texts)])


def template_pairs(docs: Sequence[SourceDoc], count: int, prefix: str, start: int) -> list[Group]:
    """The ``count`` most similar pairs of distinct documents of one source, no document used twice; documents
    with fewer than MIN_SHINGLES shingles are left out, as the clean stage's word minimum drops them."""
    longest = MAX_TEMPLATE_CHARS.get(docs[0].source, MAX_DOCUMENT_CHARS)
    cfg = default_dedup_config()
    sizes = stage_shingles([d.text for d in docs], cfg).sizes.tolist()
    usable = [d for d, size in zip(docs, sizes, strict=True) if len(d.text) <= longest and size >= MIN_SHINGLES]
    sets = stage_shingles([d.text for d in usable], cfg)
    shared, union = all_pair_overlaps(sets)
    scores = np.divide(shared, union, out=np.zeros(shared.shape), where=union > 0)
    rows, cols = np.triu_indices(len(usable), k=1)
    order = sorted(range(rows.size), key=lambda k: (-scores[rows[k], cols[k]], rows[k], cols[k]))
    used: set[int] = set()
    groups: list[Group] = []
    for k in order:
        a, b = int(rows[k]), int(cols[k])
        if a in used or b in used or usable[a].text.strip() == usable[b].text.strip():
            continue
        used.update((a, b))
        name = f"{prefix}-{start + len(groups):04d}"
        pair = [usable[a], usable[b]]
        groups.append(
            Group(name, "template", [Doc(f"{name}/{r}", name, "template", d.source, d.domain, d.location, d.text)
                                     for r, d in zip("ab", pair, strict=True)])
        )  # fmt: skip
        if len(groups) == count:
            break
    return groups


def all_pair_overlaps(sets: ShingleSets) -> tuple[np.ndarray, np.ndarray]:
    """Shared-shingle counts and union sizes of every pair of documents, by one sparse product."""
    _, columns = np.unique(sets.hashes, return_inverse=True)
    rows = np.repeat(np.arange(len(sets)), sets.sizes)
    matrix = sparse.csr_matrix(
        (np.ones(rows.size, dtype=np.int32), (rows, columns)), shape=(len(sets), columns.max() + 1)
    )
    shared = (matrix @ matrix.T).toarray()
    sizes = sets.sizes
    return shared, sizes[:, None] + sizes[None, :] - shared


# ---- assembly ----------------------------------------------------------------------------------------------


def build_groups(docs: Sequence[SourceDoc]) -> list[Group]:
    by_source: dict[str, list[SourceDoc]] = {}
    for doc in docs:
        by_source.setdefault(doc.source, []).append(doc)
    groups: list[Group] = []
    reserved: set[tuple[str, str]] = set()
    for source, count in TEMPLATE_PAIRS.items():
        found = template_pairs(by_source[source], count, "template", len(groups))
        groups += found
        reserved.update((d.source, d.location) for g in found for d in g.docs)
    blocks = boilerplate_blocks(docs)
    edits: list[Group] = []
    chains: list[Group] = []
    for source, count in EDIT_PAIRS.items():
        pool = passages([d for d in by_source[source] if (d.source, d.location) not in reserved])
        wanted = count + CHAINS.get(source, 0)
        if len(pool) < wanted + 1:
            raise SystemExit(f"{source}: {len(pool)} passages, need {wanted + 1}")
        # Donors (the words edits put in) are passages the set does not otherwise hold.
        donors = pool[wanted:]
        kinds = random.Random(rank(source, "kinds")).sample(EDIT_KINDS, len(EDIT_KINDS))
        for i in range(count):
            name = f"edit-{len(edits):04d}"
            edits.append(edit_pair(name, kinds[i % len(kinds)], pool[i], donors[i % len(donors)], blocks))
        for i in range(count, wanted):
            chains.append(chain(f"chain-{len(chains):03d}", pool[i], donors[i % len(donors)]))
    return edits + chains + groups


def passages(docs: Sequence[SourceDoc]) -> list[Passage]:
    """Every passage of the documents with at least MIN_SHINGLES shingles, in keyed-rank order."""
    cfg = default_dedup_config()
    by_char = char_shingled(normalize_texts([d.text for d in docs]), cfg.shingle, cfg.min_unspaced_share)
    found = [
        Passage(doc, piece, bool(char))
        for doc, char in zip(docs, by_char.tolist(), strict=True)
        for piece in pieces(doc.text, bool(char))
    ]
    sizes = stage_shingles([p.text for p in found], cfg).sizes
    keep = [p for p, size in zip(found, sizes.tolist(), strict=True) if size >= MIN_SHINGLES]
    return sorted(keep, key=lambda p: rank(p.source.source, p.source.location, p.text[:200]))


def labelled_pairs(groups: Sequence[Group]) -> list[dict[str, object]]:
    """Every pair inside a group, and every other pair at or above COMPLETE_ABOVE, in document order."""
    cfg = default_dedup_config()
    docs = [d for g in groups for d in g.docs]
    group_index = np.repeat(np.arange(len(groups)), [len(g.docs) for g in groups])
    sets = stage_shingles([d.text for d in docs], cfg)
    by_char = char_shingled(normalize_texts([d.text for d in docs]), cfg.shingle, cfg.min_unspaced_share)
    shared, union = all_pair_overlaps(sets)
    rows, cols = np.triu_indices(len(docs), k=1)
    same_group = group_index[rows] == group_index[cols]
    wanted = same_group | (shared[rows, cols] >= COMPLETE_ABOVE * union[rows, cols])
    out: list[dict[str, object]] = []
    for a, b, inside in zip(rows[wanted].tolist(), cols[wanted].tolist(), same_group[wanted].tolist(), strict=True):
        group = groups[group_index[a]]
        modes = {"char" if by_char[a] else "word", "char" if by_char[b] else "word"}
        out.append(
            {
                "a": docs[a].id,
                "b": docs[b].id,
                "kind": group.kind if inside else "incidental",
                "shingles": modes.pop() if len(modes) == 1 else "mixed",
                "edit_rate": group.edit_rate if inside else None,
                "shared": int(shared[a, b]),
                "union": int(union[a, b]),
                "jaccard": round(float(shared[a, b] / union[a, b]), 6) if union[a, b] else 0.0,
            }
        )
    return out


# ---- output ------------------------------------------------------------------------------------------------


def write_set(out_dir: Path, groups: Sequence[Group], pairs: Sequence[dict[str, object]]) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps(
            {"id": d.id, "group": d.group, "kind": d.kind, "source": d.source, "domain": d.domain,
             "location": d.location, "text": d.text},
            ensure_ascii=False,
        )
        for g in groups
        for d in g.docs
    ]  # fmt: skip
    payload = ("\n".join(lines) + "\n").encode("utf-8")
    (out_dir / DOCUMENTS_FILE).write_bytes(gzip.compress(payload, compresslevel=9, mtime=0))
    pair_lines = [json.dumps(p, ensure_ascii=False) for p in pairs]
    (out_dir / PAIRS_FILE).write_text("\n".join(pair_lines) + "\n", encoding="utf-8")
    (out_dir / "README.md").write_text(readme(groups, pairs), encoding="utf-8")


def readme(groups: Sequence[Group], pairs: Sequence[dict[str, object]]) -> str:
    n_docs = sum(len(g.docs) for g in groups)
    kinds = sorted({str(p["kind"]) for p in pairs})
    buckets = [(0.0, COMPLETE_ABOVE), (COMPLETE_ABOVE, 0.5), (0.5, 0.6), (0.6, 0.7), (0.7, 0.8), (0.8, 0.9),
               (0.9, 1.0), (1.0, 1.01)]  # fmt: skip
    table = ["| kind | pairs | " + " | ".join(_bucket_name(lo, hi) for lo, hi in buckets) + " |"]
    table.append("| --- | ---: | " + " | ".join("---:" for _ in buckets) + " |")
    for kind in [*kinds, "all"]:
        chosen = [float(str(p["jaccard"])) for p in pairs if kind in ("all", p["kind"])]
        counts = [sum(lo <= j < hi for j in chosen) for lo, hi in buckets]
        table.append(f"| {kind} | {len(chosen)} | " + " | ".join(str(c) for c in counts) + " |")
    sources = Counter(d.source for g in groups for d in g.docs)
    shingles = Counter(str(p["shingles"]) for p in pairs)
    return README_TEMPLATE.format(
        documents=n_docs,
        pairs=len(pairs),
        groups=len(groups),
        complete=COMPLETE_ABOVE,
        table="\n".join(table),
        sources="\n".join(f"| {name} | {count} |" for name, count in sorted(sources.items())),
        shingles=", ".join(f"{kind} {count}" for kind, count in sorted(shingles.items())),
    )


def _bucket_name(low: float, high: float) -> str:
    return "1.0" if low == 1.0 else f"[{low:.1f}, {high:.1f})"


README_TEMPLATE = """# Labelled near-duplicates (dedup)

Real documents, copies of them edited at controlled rates, and hard negatives, each pair labelled with its true
Jaccard similarity on the shingles the dedup stage uses (its own `normalize_text` and `shingle_sets` under the
default config: word 5-grams, or character 5-grams for text mostly written without spaces). Written by
`scripts/build_labelled_dedup.py` (rebuild: `python scripts/build_labelled_dedup.py`, verify:
`--check`); measured by `pretrain_eval/stage_quality/dedup.py` (see docs/stage-quality/dedup.md).

{documents} documents in {groups} groups, {pairs} labelled pairs (shingles: {shingles}).

## Files

- `documents.jsonl.gz`: one document per line: `id` (`GROUP/ROLE`), `group`, `kind`, `source`, `domain`,
  `location` (where the original text is in its source), `text`.
- `pairs.jsonl`: one labelled pair per line: `a`, `b` (document ids), `kind`, `shingles` (`word`, `char`, or
  `mixed` when the two are shingled differently), `edit_rate` (units edited, inserted or deleted per unit of the
  original, edit pairs only), `shared` and `union` (shingle counts) and `jaccard` = shared / union.

## Groups

- `edit-NNNN` (`a`, `b`): a passage of a real document (`a`) and a copy (`b`) edited by one kind of change:
  `substitute` (runs of 1-12 words, or twice as many characters for text shingled by character, replaced by
  runs from another passage of the same source), `insert`, `delete`, `reorder` (1-3 paragraphs moved),
  `boilerplate` (real header and footer lines added: manual page footers, licence notices), `format`
  (whitespace and case only: re-wrapped lines, indentation, CRLF, an upper-cased first line or lower-cased text),
  `mixed` (all of these). The number of edits is searched so that the Jaccard lands near a target drawn
  uniformly from [0.4, 1.0].
- `chain-NNN` (`v0`..`v3`): four successive revisions of a passage, each with words (or characters) substituted,
  inserted and deleted in the previous one (Jaccard 0.82-0.93 between neighbours); every pair of the chain is
  labelled, and the ends are far apart.
- `template-NNNN` (`a`, `b`): two different whole documents of one source, the most similar such pairs it has
  (manual pages of one template, licences of one family, glossary entries, parallel Bible chapters, handbook
  pages in two locales, FAQ chapters, code files of one project): the hard negatives (the few above a threshold
  are true near-duplicates, such as an untranslated handbook page sampled in two locales).
- `incidental`: any other pair of the set at Jaccard >= {complete}. Every pair missing from `pairs.jsonl` is below
  {complete}: the labels are complete above it, so a system's precision counts every pair it puts together.

## Pairs by kind and Jaccard

{table}

## Documents by source

| source | documents |
| --- | ---: |
{sources}

## Sources and licences

All text is real: the demo corpus (`pretrain_core/data/demo/`, read through the pipeline's ingestion; provenance
and licences per source in `pretrain_core/data/demo/SOURCES.md`: public-domain Bible translations, the Jargon File,
Chinese fortunes (GPL-3+), Python documentation (PSF-2.0), the Debian Handbook (GPL-2+ / CC-BY-SA-3.0), manual pages
(free licences per page), source files of free projects, the Debian FAQ) and `data/reference/` (licence texts, which
permit verbatim copying, and Vim's tutors under the Vim licence; see `data/reference/README.md`). Edited copies
are derived works of those texts under the same licences.
"""


def build(out: Path) -> None:
    groups = build_groups(read_sources())
    pairs = labelled_pairs(groups)
    write_set(out, groups, pairs)
    print(f"wrote {sum(len(g.docs) for g in groups)} documents and {len(pairs)} pairs to {out}")


def main(argv: Sequence[str] | None = None) -> int:
    return build_or_check(build, DEFAULT_OUT, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
