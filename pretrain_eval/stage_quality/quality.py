"""Quality stage measured on the labelled quality set: does the pipeline rank real text above low-quality text?

The pipeline judges quality twice: the clean stage drops documents that fail its heuristic rules, and the quality
stage scores what is left by perplexity under reference n-gram models (per language for prose, a code model for
code) and buckets it within its language. "Ours" is that judgement, run with the demo config's clean and quality
settings on the set's eval items, the quality models fitted on the set's reference files (kept apart from every
eval item): an item the clean stage drops ranks below every kept one, kept items rank by their perplexity's place
between their language's bucket cut-offs (0 at the head/middle boundary, 1 at middle/tail), which puts scores of
different languages and models on one scale. The baseline is the Gopher rules as a score (Rae et al. 2021): the
number of rules an item fails (StarCoder-style code rules for code), in the clean stage's implementation.

Figures are ROC-AUC (the chance that a random good item outranks a random bad one): overall, per group (prose,
code), per corruption kind (its bad items against all good items of the group) and per language (good and bad
items of that language, or programming language for code).
"""

from __future__ import annotations

import gzip
import json
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from pretrain_core import schema, storage
from pretrain_core.clean import code_rules, prose_rules
from pretrain_core.clean.config import CleanConfig
from pretrain_core.clean.stage import CleanStage
from pretrain_core.config import load_config
from pretrain_core.quality.config import SHIPPED_REFERENCES, QualityConfig
from pretrain_core.quality.reference import shipped_reference
from pretrain_core.quality.stage import QualityStage, fit_quality
from pretrain_eval.stage_quality.figures import OURS, Bar, Figure, roc_auc

STAGE = "quality"
BASELINE = "Gopher rules (failed-rule count)"
METRIC = "roc_auc"
OVERALL_BAR = Bar(">=", 0.97)
SLICE_BAR = Bar(">=", 0.90)  # every corruption kind and every language
EVAL_FILE = "eval.jsonl.gz"
DROPPED_SCORE = -1e6  # below every kept item's score
SLICE_REFERENCE_CHARS = 40_000
_SOURCE = "labelled_quality"


@dataclass(frozen=True)
class LabelledItem:
    id: str
    group: str  # prose | code
    lang: str  # ISO 639-1, or the programming language for code
    kind: str  # good, or the corruption
    label: int  # 1 good, 0 bad
    domain: str
    text: str


def load_items(set_dir: str, limit: int | None = None) -> list[LabelledItem]:
    """The eval items; with `limit`, a deterministic slice taking items round-robin over (group, lang, kind) in id
    order, so every slice holds both labels in every group it touches."""
    with gzip.open(Path(set_dir) / EVAL_FILE, "rt", encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle if line.strip()]
    items = sorted(
        (
            LabelledItem(r["id"], r["group"], r["lang"], r["kind"], int(r["label"]), r["domain"], r["text"])
            for r in records
        ),
        key=lambda item: item.id,
    )
    if limit is None or limit >= len(items):
        return items
    cells: dict[tuple[str, str, str], list[LabelledItem]] = {}
    for item in items:
        cells.setdefault((item.group, item.lang, item.kind), []).append(item)
    chosen: list[LabelledItem] = []
    depth = 0
    while len(chosen) < limit:
        for cell in sorted(cells):
            if depth < len(cells[cell]) and len(chosen) < limit:
                chosen.append(cells[cell][depth])
        depth += 1
    return sorted(chosen, key=lambda item: item.id)


def stage_configs(reference_dir: str | None = None) -> tuple[CleanConfig, QualityConfig]:
    """The demo config's clean and quality settings (the quality models fitted on the shipped reference), or with
    the references pointed at the sliced copies in `reference_dir`."""
    demo = load_config()
    if reference_dir is None:
        return demo.clean, demo.quality
    quality = demo.quality.model_dump(mode="json")
    for name in SHIPPED_REFERENCES:
        quality[f"{name}_reference"]["urls"] = [str(Path(reference_dir) / f"{name}.jsonl.gz")]
    return demo.clean, QualityConfig.model_validate(quality)


def write_reference_slice(out_dir: str, chars_per_lang: int) -> str:
    """Copies of the shipped references holding each language's first records up to `chars_per_lang` characters:
    the reference of a sliced run, so that fitting the models stays a matter of seconds."""
    for name in SHIPPED_REFERENCES:
        spent: dict[str, int] = {}
        with (
            gzip.open(shipped_reference(name), "rt", encoding="utf-8") as source,
            gzip.open(Path(out_dir) / f"{name}.jsonl.gz", "wt", encoding="utf-8") as target,
        ):
            for line in source:
                record = json.loads(line)
                if spent.get(record["lang"], 0) < chars_per_lang:
                    spent[record["lang"]] = spent.get(record["lang"], 0) + len(record["text"])
                    target.write(line)
    return out_dir


def ingest_table(items: Sequence[LabelledItem], code_domains: Sequence[str]) -> pa.Table:
    return pa.table(
        {
            "id": [item.id for item in items],
            "text": [item.text for item in items],
            "source": [_SOURCE] * len(items),
            "domain": [item.domain for item in items],
            "location": [f"{EVAL_FILE}#{item.id}" for item in items],
            "code_language": [item.lang if item.domain in code_domains else None for item in items],
        },
        schema=schema.INGEST,
    )


def pipeline_scores(items: Sequence[LabelledItem], clean_cfg: CleanConfig, quality_cfg: QualityConfig) -> np.ndarray:
    """Ours: clean drops rank lowest; kept items by their perplexity's place between their bucket cut-offs."""
    cleaned = CleanStage(clean_cfg).process(ingest_table(items, quality_cfg.code_domains))
    kept = as_quality_input(cleaned.kept)
    scores = {item_id: DROPPED_SCORE for item_id in cleaned.dropped.column("id").to_pylist()}
    if kept.num_rows:
        with tempfile.TemporaryDirectory() as tmp:
            shard = storage.join(tmp, "input", "part-00000.parquet")
            storage.write_parquet(shard, kept)
            stage = QualityStage(quality_cfg, fit_quality([shard], quality_cfg, storage.join(tmp, "artifacts")))
            scored = stage.process(kept)
            for table in (scored.kept, scored.dropped):
                for item_id, score in zip(
                    table.column("id").to_pylist(), table.column("quality_score").to_pylist(), strict=True
                ):
                    scores[item_id] = score
    return np.array([scores[item.id] for item in items], dtype=np.float64)


def as_quality_input(cleaned: pa.Table) -> pa.Table:
    """Clean's output as the quality stage receives it when dedup and PII change nothing: each document its own
    cluster, no PII found (the set has no duplicates, and PII redaction does not change what quality judges)."""
    n = cleaned.num_rows
    table = cleaned.append_column("dup_cluster", cleaned.column("id"))
    table = table.append_column("dup_cluster_size", pa.array([1] * n, pa.int32()))
    table = table.append_column("pii_count", pa.array([0] * n, pa.int32()))
    table = table.append_column("pii_types", pa.array([[]] * n, pa.list_(pa.string())))
    return schema.validate(table.cast(schema.PII), schema.PII, "labelled quality input")


def gopher_scores(items: Sequence[LabelledItem], clean_cfg: CleanConfig) -> np.ndarray:
    """Baseline: minus the number of heuristic rules an item fails, every rule evaluated (not first failure)."""
    stage = CleanStage(clean_cfg)
    scores = []
    for item in items:
        if item.domain == "code":
            doc = code_rules.CodeDoc(item.text, item.lang)
            failed = sum(
                rule(doc, clean_cfg.code) is not None for rule in (code_rules.file_size, *code_rules.CODE_RULES)
            )
        else:
            lang = stage.clean_prose(item.text).lang
            prose = prose_rules.ProseDoc(
                item.text,
                frozenset(w.lower() for w in clean_cfg.prose.stop_words.get(lang, [])),
                clean_cfg.prose.unsegmented_share,
                clean_cfg.prose.unsegmented_ngram_scale,
            )
            thresholds = clean_cfg.prose.thresholds_for(lang)
            failed = sum(rule(prose, thresholds) is not None for rule in prose_rules.PROSE_RULES)
        scores.append(-float(failed))
    return np.array(scores, dtype=np.float64)


def auc_figures(system: str, items: Sequence[LabelledItem], scores: np.ndarray) -> list[Figure]:
    """ROC-AUC overall, per group, per corruption kind and per language. Bars (on our rows only) as the issue sets
    them: overall, every kind, every language; the prose and code rows are for reading."""
    ours = system == OURS
    figures: list[Figure] = []

    def add(group: str, rows: list[int], bar: Bar | None) -> None:
        labels = [items[r].label for r in rows]
        if len(set(labels)) == 2:
            value = roc_auc(labels, scores[rows].tolist())
            figures.append(Figure(STAGE, group, system, METRIC, value, bar if ours else None, len(rows)))

    every = list(range(len(items)))
    add("overall", every, OVERALL_BAR)
    for group in ("prose", "code"):
        members = [r for r in every if items[r].group == group]
        add(group, members, None)
        good = [r for r in members if items[r].label == 1]
        for kind in sorted({items[r].kind for r in members} - {"good"}):
            add(f"{group}:kind={kind}", good + [r for r in members if items[r].kind == kind], SLICE_BAR)
        for lang in sorted({items[r].lang for r in members}):
            add(f"{group}:lang={lang}", [r for r in members if items[r].lang == lang], SLICE_BAR)
    return figures


@dataclass(frozen=True)
class Scored:
    """The evaluated items with ours and the baseline's score of each (higher: better)."""

    items: list[LabelledItem]
    ours: np.ndarray
    baseline: np.ndarray


def score_set(set_dir: str, limit: int | None = None) -> Scored:
    """Run both systems on the set, or on a deterministic slice of `limit` items (the models then fitted on
    `SLICE_REFERENCE_CHARS` of reference per language)."""
    items = load_items(set_dir, limit)
    with tempfile.TemporaryDirectory() as tmp:
        reference_dir = None if limit is None else write_reference_slice(tmp, SLICE_REFERENCE_CHARS)
        clean_cfg, quality_cfg = stage_configs(reference_dir)
        ours = pipeline_scores(items, clean_cfg, quality_cfg)
    return Scored(items, ours, gopher_scores(items, clean_cfg))


def figures_of(scored: Scored) -> list[Figure]:
    return auc_figures(OURS, scored.items, scored.ours) + auc_figures(BASELINE, scored.items, scored.baseline)


def evaluate(set_dir: str, limit: int | None = None) -> list[Figure]:
    """Ours and the baseline on the set (or a deterministic slice of `limit` items)."""
    return figures_of(score_set(set_dir, limit))
