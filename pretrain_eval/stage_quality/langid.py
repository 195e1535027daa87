"""Language id measured on labelled snippets of real text: the clean stage's detector against raw langdetect.

The set (data/labelled/langid, built by scripts/build_labelled_langid.py) holds snippets of 20 to 1,000 characters
in 11 languages, labelled with their language. Ours is what the clean stage does to a prose document: normalise it
and call ``detect_language`` with the pipeline's default config. The baseline is the usual first attempt:
``langdetect.detect`` with ``DetectorFactory.seed = 0`` (without the seed it answers differently from run to run).
A snippet counts as right only when the answer is its label, so "und" (ours declining to answer) counts as wrong;
langdetect's zh-cn and zh-tw both count as zh.

Accuracy is reported per length bucket (the bars), per language and overall. Stability is measured too: ours
detects every snippet a second time, in reverse order, and the share of identical answers must be 1 (the tests also
compare with a fresh process).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import langdetect
from langdetect.lang_detect_exception import LangDetectException

from pretrain_core import storage
from pretrain_core.clean.config import CleanConfig
from pretrain_core.clean.langid import UNDETERMINED, detect_language
from pretrain_core.clean.normalize import Normalizer
from pretrain_core.config import load_config
from pretrain_eval.stage_quality.figures import OURS, Bar, Figure

STAGE = "langid"
BASELINE = "langdetect"
SET_FILE = "snippets.jsonl"
BUCKET_BARS = {"20-50": 0.93, "50-200": 0.97, "200+": 0.995}  # bucket -> least accuracy ours must reach
_LANGDETECT_CODES = {"zh-cn": "zh", "zh-tw": "zh"}


@dataclass(frozen=True)
class Snippet:
    id: str
    lang: str
    bucket: str
    text: str


def load_snippets(set_dir: str, limit: int | None = None) -> list[Snippet]:
    """The set's snippets; with ``limit``, that many spread evenly over the file (which is sorted by language and
    bucket, so every group keeps its share)."""
    rows = [json.loads(line) for line in storage.read_bytes(storage.join(set_dir, SET_FILE)).decode().splitlines()]
    if limit is not None and limit < len(rows):
        rows = [rows[i * len(rows) // limit] for i in range(limit)]
    return [Snippet(r["id"], r["lang"], r["bucket"], r["text"]) for r in rows]


def clean_stage_detector(cfg: CleanConfig | None = None) -> Callable[[str], str]:
    """The clean stage's language decision for one prose text (its default config unless given)."""
    cfg = cfg or load_config().clean
    normalizer = Normalizer(cfg.normalize)

    def detect(text: str) -> str:
        return detect_language(normalizer.prose(text).text, cfg.langid).lang

    return detect


def langdetect_detector() -> Callable[[str], str]:
    """Raw, seeded ``langdetect.detect``; its Chinese variants mapped to zh, its "no features" error to und."""
    langdetect.DetectorFactory.seed = 0

    def detect(text: str) -> str:
        try:
            lang = langdetect.detect(text)
        except LangDetectException:
            return UNDETERMINED
        return _LANGDETECT_CODES.get(lang, lang)

    return detect


def evaluate(set_dir: str, limit: int | None = None) -> list[Figure]:
    """Accuracy per length bucket, per language and overall for ours and langdetect, and our run-to-run agreement."""
    snippets = load_snippets(set_dir, limit)
    ours = clean_stage_detector()
    answers = [ours(s.text) for s in snippets]
    again = [ours(s.text) for s in reversed(snippets)][::-1]  # a second run, in the other order
    agreement = sum(a == b for a, b in zip(answers, again, strict=True)) / len(snippets)
    baseline = langdetect_detector()
    return [
        *accuracy_figures(snippets, answers, OURS),
        Figure(STAGE, "all", OURS, "rerun_agreement", agreement, Bar(">=", 1.0), len(snippets)),
        *accuracy_figures(snippets, [baseline(s.text) for s in snippets], BASELINE),
    ]


def accuracy_figures(snippets: Sequence[Snippet], answers: Sequence[str], system: str) -> list[Figure]:
    """Share of right answers per bucket (with the bars, on ours), per language and over all snippets."""
    groups: dict[str, list[bool]] = defaultdict(list)
    for snippet, answer in zip(snippets, answers, strict=True):
        right = answer == snippet.lang
        groups[f"length={snippet.bucket}"].append(right)
        groups[f"lang={snippet.lang}"].append(right)
        groups["all"].append(right)
    order = [f"length={b}" for b in BUCKET_BARS] + sorted(g for g in groups if g.startswith("lang=")) + ["all"]
    figures = []
    for group in (g for g in order if g in groups):
        bucket = group.removeprefix("length=")
        bar = Bar(">=", BUCKET_BARS[bucket]) if system == OURS and bucket in BUCKET_BARS else None
        hits = groups[group]
        figures.append(Figure(STAGE, group, system, "accuracy", sum(hits) / len(hits), bar, len(hits)))
    return figures
