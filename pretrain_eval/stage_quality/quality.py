"""Quality stage measured on the labelled quality set: does the pipeline rank real text above low-quality text,
including kinds and sources nothing in it was tuned on?

The pipeline judges quality twice: the clean stage drops documents that fail its heuristic rules, and the quality
stage scores what is left (`quality_score`: perplexity under the shipped reference's models, placed between its
language's cut-offs, combined with the shipped classifier's judgement of the document's signals). "Ours" is that
judgement with the embedded default config, run on the set's items: an item the clean stage drops ranks below
every kept one, kept items rank by `quality_score`. The baseline is the Gopher rules as a score (Rae et al.
2021): minus the number of rules an item fails (StarCoder-style code rules for code), in the clean stage's
implementation.

Figures are ROC-AUC (the chance that a random good item outranks a random bad one): overall, per group (prose,
code), per kind (its bad items against all good items of the group), per language, and two held-out views:
- `leave_out_kind=K`: the classifier refitted without its generator of kind K (kinds it has none for, marked
  `heldout_kind`, were never in its training), then kind K as above;
- `leave_out_source=S`: the reference models and the classifier refitted without source S, then the good items
  of S against every bad item of the group (sources the reference never had are marked as such).
The held-out kinds (data/labelled/quality/heldout) come from other generators and sources than anything tuned.
"""

from __future__ import annotations

import gzip
import json
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from pretrain_core import schema, storage
from pretrain_core.clean import code_rules, prose_rules
from pretrain_core.clean.config import CleanConfig
from pretrain_core.clean.stage import CleanStage
from pretrain_core.config import load_config
from pretrain_core.licences import NOASSERTION
from pretrain_core.quality.classifier import SignalClassifier
from pretrain_core.quality.config import SHIPPED_REFERENCES, QualityConfig
from pretrain_core.quality.reference import shipped_reference
from pretrain_core.quality.stage import QualityStage, fit_quality
from pretrain_eval.quality_classifier.build import TrainingSet, fit_classifiers, training_set
from pretrain_eval.quality_classifier.training_data import CODE_GENERATORS, PROSE_GENERATORS
from pretrain_eval.stage_quality.figures import OURS, Bar, Figure, roc_auc

STAGE = "quality"
BASELINE = "Gopher rules (failed-rule count)"
METRIC = "roc_auc"
OVERALL_BAR = Bar(">=", 0.95)
KIND_BAR = Bar(">=", 0.85)  # every kind, trained or held out
LANG_BAR = Bar(">=", 0.85)
LEAVE_OUT_BAR = Bar(">=", 0.90)  # every kind with its generator left out of the classifier's training
EVAL_FILE, HELDOUT_FILE = "eval.jsonl.gz", "heldout/items.jsonl.gz"
DROPPED_SCORE = -1e6  # below every kept item's score
SLICE_REFERENCE_CHARS = 40_000
TRAINED_KINDS = {"prose": set(PROSE_GENERATORS), "code": set(CODE_GENERATORS)}
_SOURCE = "labelled_quality"

Classifiers = dict[str, SignalClassifier]


@dataclass(frozen=True)
class LabelledItem:
    id: str
    group: str  # prose | code
    lang: str  # ISO 639-1, or the programming language for code
    kind: str  # good, or the corruption
    label: int  # 1 good, 0 bad
    domain: str
    source: str
    text: str
    heldout: bool = False  # from the held-out kinds (other generators and sources)


def _read(path: Path, heldout: bool) -> list[LabelledItem]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle if line.strip()]
    return [
        LabelledItem(
            r["id"], r["group"], r["lang"], r["kind"], int(r["label"]), r["domain"], r["source"], r["text"], heldout
        )
        for r in records
    ]


def load_items(set_dir: str, limit: int | None = None) -> list[LabelledItem]:
    """The eval items and the held-out kinds; with `limit`, a deterministic slice taking items round-robin over
    (group, lang, kind) in id order, so every slice holds both labels in every group it touches."""
    items = sorted(
        _read(Path(set_dir) / EVAL_FILE, False) + _read(Path(set_dir) / HELDOUT_FILE, True), key=lambda i: i.id
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
    """The embedded default config's clean and quality settings (the quality models fitted on the shipped
    reference), or with the references pointed at the copies in `reference_dir`."""
    demo = load_config()
    if reference_dir is None:
        return demo.clean, demo.quality
    quality = demo.quality.model_dump(mode="json")
    for name in SHIPPED_REFERENCES:
        quality[f"{name}_reference"]["urls"] = [str(Path(reference_dir) / f"{name}.jsonl.gz")]
    return demo.clean, QualityConfig.model_validate(quality)


def write_reference_copy(out_dir: str, chars_per_lang: int | None, without_source: str | None = None) -> str:
    """Copies of the shipped references, each language's records up to `chars_per_lang` characters (all with
    None) and without the records of `without_source`: the reference of a sliced or a leave-one-source-out run."""
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    for name in SHIPPED_REFERENCES:
        spent: dict[str, int] = {}
        with (
            gzip.open(shipped_reference(name), "rt", encoding="utf-8") as source,
            gzip.open(Path(out_dir) / f"{name}.jsonl.gz", "wt", encoding="utf-8") as target,
        ):
            for line in source:
                record = json.loads(line)
                if record["source"] == without_source:
                    continue
                if chars_per_lang is None or spent.get(record["lang"], 0) < chars_per_lang:
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
            "licence": [NOASSERTION] * len(items),
            "location": [f"{EVAL_FILE}#{item.id}" for item in items],
            "code_language": [item.lang if item.domain in code_domains else None for item in items],
        },
        schema=schema.INGEST,
    )


@contextmanager
def fitted_pipeline(
    items: Sequence[LabelledItem], clean_cfg: CleanConfig, quality_cfg: QualityConfig
) -> Iterator[Callable[[Classifiers | None], np.ndarray]]:
    """Clean the items and fit the quality models once; yield a scorer that runs the quality stage with the given
    classifiers (None: the shipped ones) and returns ours for every item: clean drops lowest, then quality_score."""
    cleaned = CleanStage(clean_cfg).process(ingest_table(items, quality_cfg.code_domains))
    kept = as_quality_input(cleaned.kept)
    dropped = {item_id: DROPPED_SCORE for item_id in cleaned.dropped.column("id").to_pylist()}
    with tempfile.TemporaryDirectory() as tmp:
        artifacts: dict[str, str] = {}
        if kept.num_rows:
            shard = storage.join(tmp, "input", "part-00000.parquet")
            storage.write_parquet(shard, kept)
            artifacts = fit_quality([shard], quality_cfg, storage.join(tmp, "artifacts"))

        def score(classifiers: Classifiers | None) -> np.ndarray:
            scores = dict(dropped)
            if kept.num_rows:
                scored = QualityStage(quality_cfg, artifacts, classifiers).process(kept)
                for table in (scored.kept, scored.dropped):
                    ids, values = table.column("id").to_pylist(), table.column("quality_score").to_pylist()
                    scores.update(zip(ids, values, strict=True))
            return np.array([scores[item.id] for item in items], dtype=np.float64)

        yield score


def pipeline_scores(
    items: Sequence[LabelledItem],
    clean_cfg: CleanConfig,
    quality_cfg: QualityConfig,
    classifiers: Classifiers | None = None,
) -> np.ndarray:
    """Ours for every item, with the shipped classifiers unless others are given."""
    with fitted_pipeline(items, clean_cfg, quality_cfg) as score:
        return score(classifiers)


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


def _auc(items: Sequence[LabelledItem], scores: np.ndarray, rows: list[int]) -> float | None:
    labels = [items[r].label for r in rows]
    return roc_auc(labels, scores[rows].tolist()) if len(set(labels)) == 2 else None


def auc_figures(system: str, items: Sequence[LabelledItem], scores: np.ndarray) -> list[Figure]:
    """ROC-AUC overall, per group, per kind and per language. Bars (on our rows only): overall, every kind,
    every language; the prose and code rows are for reading."""
    ours = system == OURS
    figures: list[Figure] = []

    def add(group: str, rows: list[int], bar: Bar | None) -> None:
        value = _auc(items, scores, rows)
        if value is not None:
            figures.append(Figure(STAGE, group, system, METRIC, value, bar if ours else None, len(rows)))

    every = list(range(len(items)))
    add("overall", every, OVERALL_BAR)
    for group in ("prose", "code"):
        members = [r for r in every if items[r].group == group]
        add(group, members, None)
        good = [r for r in members if items[r].label == 1]
        for kind in sorted({items[r].kind for r in members} - {"good"}):
            label = "heldout_kind" if kind not in TRAINED_KINDS[group] else "kind"
            add(f"{group}:{label}={kind}", good + [r for r in members if items[r].kind == kind], KIND_BAR)
        for lang in sorted({items[r].lang for r in members}):
            add(f"{group}:lang={lang}", [r for r in members if items[r].lang == lang], LANG_BAR)
    return figures


def leave_one_out_figures(
    items: Sequence[LabelledItem],
    clean_cfg: CleanConfig,
    quality_cfg: QualityConfig,
    data: TrainingSet,
    reference_chars: int | None,
) -> list[Figure]:
    """Ours with each trained kind's generator left out of the classifier, and with each prose reference source
    left out of both the reference models and the classifier (see the module docstring)."""
    figures: list[Figure] = []
    with fitted_pipeline(items, clean_cfg, quality_cfg) as score:
        for group, kinds in TRAINED_KINDS.items():
            good = [r for r, item in enumerate(items) if item.group == group and item.label == 1]
            for kind in sorted(kinds):
                rows = good + [r for r, item in enumerate(items) if item.group == group and item.kind == kind]
                if not any(items[r].kind == kind for r in rows):
                    continue
                scores = score(fit_classifiers(data, keep=lambda doc, k=kind: doc.kind != k))  # type: ignore[misc]
                value = _auc(items, scores, rows)
                if value is not None:
                    figures.append(
                        Figure(STAGE, f"{group}:leave_out_kind={kind}", OURS, METRIC, value, LEAVE_OUT_BAR, len(rows))
                    )
    reference_sources = {doc.source for doc in data.rows("prose")}
    bad = [r for r, item in enumerate(items) if item.group == "prose" and item.label == 0]
    for source in sorted({item.source for item in items if item.group == "prose" and item.label == 1}):
        rows = [
            r for r, item in enumerate(items) if item.group == "prose" and item.label == 1 and item.source == source
        ]
        if source in reference_sources:
            with tempfile.TemporaryDirectory() as tmp:
                _, without = stage_configs(write_reference_copy(tmp, reference_chars, without_source=source))
                classifiers = fit_classifiers(data, keep=lambda doc, s=source: doc.source != s)  # type: ignore[misc]
                scores = pipeline_scores(items, clean_cfg, without, classifiers)
            label = f"prose:leave_out_source={source}"
        else:
            scores = pipeline_scores(items, clean_cfg, quality_cfg)
            label = f"prose:never_in_reference_source={source}"
        value = _auc(items, scores, rows + bad)
        if value is not None:
            figures.append(Figure(STAGE, label, OURS, METRIC, value, None, len(rows + bad)))
    return figures


@dataclass(frozen=True)
class Scored:
    """The evaluated items with ours and the baseline's score of each (higher: better), and our held-out figures."""

    items: list[LabelledItem]
    ours: np.ndarray
    baseline: np.ndarray
    leave_one_out: list[Figure]


def score_set(set_dir: str, limit: int | None = None) -> Scored:
    """Run both systems on the set, or on a deterministic slice of `limit` items (the models then fitted on
    `SLICE_REFERENCE_CHARS` of reference per language)."""
    items = load_items(set_dir, limit)
    chars = None if limit is None else SLICE_REFERENCE_CHARS
    with tempfile.TemporaryDirectory() as tmp:
        clean_cfg, quality_cfg = stage_configs(None if limit is None else write_reference_copy(tmp, chars))
        ours = pipeline_scores(items, clean_cfg, quality_cfg)
        held_out = leave_one_out_figures(items, clean_cfg, quality_cfg, training_set(), chars)
    return Scored(items, ours, gopher_scores(items, clean_cfg), held_out)


def figures_of(scored: Scored) -> list[Figure]:
    ours = auc_figures(OURS, scored.items, scored.ours)
    return ours + scored.leave_one_out + auc_figures(BASELINE, scored.items, scored.baseline)


def evaluate(set_dir: str, limit: int | None = None) -> list[Figure]:
    """Ours and the baseline on the set (or a deterministic slice of `limit` items)."""
    return figures_of(score_set(set_dir, limit))
