"""PII detection measured on labelled real text: our stage against the naive regex set of benchmarks/bench_pii.py.

The set (data/labelled/pii, built by scripts/build_labelled_pii.py) is real sentences and code with PII values put
in and labelled as character spans, and decoys (ISBNs, dates, versions, hashes, ...) that must not be flagged. Ours
is the PII stage itself with the pipeline's default config and the tagger the package ships: `PiiStage.detect`
finds the spans, code items as code documents (only the kinds `code_types` names).

Matching is by overlap, as in `pretrain_eval.pii_tagger.evaluation`: a predicted span is correct when it overlaps a gold
span of its type, and a gold span is found when a predicted span of its type overlaps it. Redaction is what
matters, and a name found without its title still hides the person. A predicted span of the wrong type counts
against both types. A decoy counts as a false positive when any predicted span overlaps it.

A second set (data/labelled/pii/names, built by scripts/build_labelled_pii_names.py) is real passages unlike the
tagger's training carriers (the Bible, the Jargon File, Python docs, the Debian Handbook in five languages,
classical Chinese) with every person name marked by hand: person precision and recall there, per split and
language, are the groups `real-names:person...`; the bars apply to the whole set and to its test split.

The baseline is the regex set that benchmarks/bench_pii.py times (email, IPv4, digit runs as phones and cards),
applied in its order with earlier matches masked, as its replacements do. It has no pattern for IBANs, national
ids, secrets, names or addresses: its recall there is 0.
"""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from pretrain_core import storage
from pretrain_core.config import load_config
from pretrain_core.pii.config import CLASSIFIER_TYPES, PII_TYPES, PiiConfig
from pretrain_core.pii.spans import Span
from pretrain_core.pii.stage import PiiStage
from pretrain_eval.stage_quality.figures import OURS, Bar, Figure, f_beta, precision_recall

STAGE = "pii"
BASELINE = "naive regex set"
SET_FILE = "items.jsonl.gz"
NAMES_DIR = "names"  # the hand-labelled real-text person-name set, beside the generated one
NAMES_GROUP = "real-names:person"
NAMES_LOCALES = ("en", "de", "fr", "zh", "ja")
LOCALES = ("en", "de", "fr", "zh", "ja", "code")
STRUCTURED_BAR = Bar(">=", 0.95)  # precision and recall of every structured type
TAGGER_RECALL_BAR = Bar(">=", 0.80)  # person names and street addresses
TAGGER_PRECISION_BAR = Bar(">=", 0.85)
DECOY_BAR = Bar("<=", 0.01)
# Applied in this order, each on the text left after earlier matches (benchmarks/bench_pii.py replaces them so).
NAIVE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("email", re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+")),
    ("ip", re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}\b")),
    ("phone", re.compile(r"\+?\d[\d \-().]{7,}\d")),  # any long digit run with separators
    ("card", re.compile(r"\b(?:\d[ -]?){13,19}\b")),  # 13-19 digits
)


@dataclass(frozen=True)
class Decoy:
    start: int
    end: int
    kind: str


@dataclass(frozen=True)
class LabelledItem:
    id: str
    split: str  # "dev" (looked at while improving the stage) or "test"
    lang: str  # en, de, fr, zh, ja, or "code"
    is_code: bool
    text: str
    spans: tuple[Span, ...]
    decoys: tuple[Decoy, ...]


def load_items(set_dir: str, limit: int | None = None) -> list[LabelledItem]:
    """The set's items; with `limit`, that many spread evenly over the file (every kind and language keeps its
    share)."""
    raw = gzip.decompress(storage.read_bytes(storage.join(set_dir, SET_FILE))).decode("utf-8")
    records = [json.loads(line) for line in raw.splitlines() if line]
    if limit is not None and limit < len(records):
        records = [records[i * len(records) // limit] for i in range(limit)]
    return [
        LabelledItem(
            id=r["id"],
            split=r["split"],
            lang=r["lang"],
            is_code=r["domain"] == "code",
            text=r["text"],
            spans=tuple(Span(s["start"], s["end"], s["type"]) for s in r["spans"]),
            decoys=tuple(Decoy(d["start"], d["end"], d["kind"]) for d in r["decoys"]),
        )
        for r in records
    ]


def default_pii_config() -> PiiConfig:
    """The PII settings of the pipeline's default (demo) config."""
    return load_config().pii


def detect_ours(items: Sequence[LabelledItem], cfg: PiiConfig) -> list[list[Span]]:
    """The stage's spans for every item, as `PiiStage.detect` finds them."""
    stage = PiiStage(cfg)
    return stage.detect([i.text for i in items], [i.is_code for i in items], [i.lang for i in items])


def detect_naive(text: str) -> list[Span]:
    """The baseline's typed matches: each pattern in turn, earlier matches masked out."""
    spans: list[Span] = []
    for kind, pattern in NAIVE_PATTERNS:
        for match in pattern.finditer(text):
            spans.append(Span(match.start(), match.end(), kind))
            text = text[: match.start()] + "\x00" * (match.end() - match.start()) + text[match.end() :]
    return sorted(spans)


@dataclass
class Tally:
    """Overlap matches of one type in one group of items."""

    correct: int = 0  # predictions that overlap a gold span of their type
    predicted: int = 0
    found: int = 0  # gold spans overlapped by a prediction of their type
    gold: int = 0

    def add(self, gold: Sequence[Span], predicted: Sequence[Span]) -> None:
        self.correct += sum(any(_overlap(p, g) for g in gold) for p in predicted)
        self.predicted += len(predicted)
        self.found += sum(any(_overlap(g, p) for p in predicted) for g in gold)
        self.gold += len(gold)

    def precision_recall(self) -> tuple[float, float]:
        return precision_recall(self.correct, self.predicted - self.correct, self.gold - self.found)


@dataclass(frozen=True)
class Scores:
    tallies: dict[str, Tally]  # "email" (all items) and "email/de" (one locale)
    decoys: Counter[str]  # "all", "isbn", "de" -> decoys
    decoys_hit: Counter[str]


def score(items: Sequence[LabelledItem], predictions: Sequence[Sequence[Span]]) -> Scores:
    """Per-type tallies, overall and per locale, and decoys hit by any prediction."""
    tallies: dict[str, Tally] = {}
    decoys: Counter[str] = Counter()
    hit: Counter[str] = Counter()
    for item, predicted in zip(items, predictions, strict=True):
        for kind in PII_TYPES:
            gold = [s for s in item.spans if s.type == kind]
            found = [s for s in predicted if s.type == kind]
            if gold or found:
                for key in (kind, f"{kind}/{item.lang}"):
                    tallies.setdefault(key, Tally()).add(gold, found)
        for decoy in item.decoys:
            flagged = any(_overlap(decoy, p) for p in predicted)
            for key in ("all", decoy.kind, item.lang):
                decoys[key] += 1
                hit[key] += flagged
    return Scores(tallies, decoys, hit)


def figures(scores: Scores, system: str) -> list[Figure]:
    """Precision, recall, F1 and F2 per type (overall and per locale), and decoy false-positive rates; bars on
    ours only."""
    out: list[Figure] = []
    for key, tally in sorted(scores.tallies.items(), key=lambda kv: _group_order(kv[0])):
        if not tally.gold:
            continue  # a locale where this type is never labelled (code has no names): only false positives
        kind = key.split("/")[0]
        precision, recall = tally.precision_recall()
        bars = _bars(kind) if system == OURS else (None, None)
        out += [
            Figure(STAGE, key, system, "precision", precision, bars[0], tally.gold),
            Figure(STAGE, key, system, "recall", recall, bars[1], tally.gold),
            Figure(STAGE, key, system, "f1", f_beta(precision, recall), None, tally.gold),
            Figure(STAGE, key, system, "f2", f_beta(precision, recall, 2.0), None, tally.gold),
        ]
    for key in sorted(scores.decoys, key=lambda k: (k != "all", k in LOCALES, k)):
        group = "decoys" if key == "all" else f"decoys/{key}" if key in LOCALES else f"decoy:{key}"
        bar = DECOY_BAR if system == OURS and key == "all" else None
        rate = scores.decoys_hit[key] / scores.decoys[key]
        out.append(Figure(STAGE, group, system, "false_positive_rate", rate, bar, scores.decoys[key]))
    return out


def name_figures(items: Sequence[LabelledItem], predictions: Sequence[Sequence[Span]]) -> list[Figure]:
    """Person precision, recall and F1 on the hand-labelled real-text set: all, per split and per language
    (recall only where the slice holds names); bars on all and on the test split (never looked at while
    tuning)."""
    tallies: dict[str, Tally] = {}
    for item, predicted in zip(items, predictions, strict=True):
        gold = [s for s in item.spans if s.type == "person"]
        found = [s for s in predicted if s.type == "person"]
        for key in (NAMES_GROUP, f"{NAMES_GROUP}/{item.split}", f"{NAMES_GROUP}/{item.lang}"):
            tallies.setdefault(key, Tally()).add(gold, found)
    order = [NAMES_GROUP, f"{NAMES_GROUP}/dev", f"{NAMES_GROUP}/test", *(f"{NAMES_GROUP}/{x}" for x in NAMES_LOCALES)]
    out: list[Figure] = []
    for key in (k for k in order if k in tallies):
        tally = tallies[key]
        precision, recall = tally.precision_recall()
        barred = key in (NAMES_GROUP, f"{NAMES_GROUP}/test")
        # n of a precision row: the spans predicted; a language with no names shows only its false positives.
        out.append(
            Figure(STAGE, key, OURS, "precision", precision, TAGGER_PRECISION_BAR if barred else None, tally.predicted)
        )
        if tally.gold:
            out += [
                Figure(STAGE, key, OURS, "recall", recall, TAGGER_RECALL_BAR if barred else None, tally.gold),
                Figure(STAGE, key, OURS, "f1", f_beta(precision, recall), None, tally.gold),
            ]
    return out


def evaluate(set_dir: str, limit: int | None = None) -> list[Figure]:
    """Ours and the baseline on the labelled set (or a `limit`-item slice), and ours on the real-name set."""
    items = load_items(set_dir, limit)
    cfg = default_pii_config()
    ours = score(items, detect_ours(items, cfg))
    naive = score(items, [detect_naive(i.text) for i in items])
    names = load_items(storage.join(set_dir, NAMES_DIR), limit)
    return figures(ours, OURS) + figures(naive, BASELINE) + name_figures(names, detect_ours(names, cfg))


def _bars(kind: str) -> tuple[Bar, Bar]:
    """(precision bar, recall bar) of a type."""
    if kind in CLASSIFIER_TYPES:
        return TAGGER_PRECISION_BAR, TAGGER_RECALL_BAR
    return STRUCTURED_BAR, STRUCTURED_BAR


def _group_order(key: str) -> tuple[int, int]:
    kind, _, locale = key.partition("/")
    return PII_TYPES.index(kind), LOCALES.index(locale) + 1 if locale else 0


def _overlap(a: Span | Decoy, b: Span | Decoy) -> bool:
    return a.start < b.end and b.start < a.end
