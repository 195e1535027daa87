"""Fit the quality classifier the package ships, from the shipped reference and documents made from it.

The pipeline never trains it: `pretrain_core/data/quality_classifier.safetensors` is what this writes, and a
test checks the shipped file is what this builds. Run it after changing the signals or the generators:

    python -m pretrain_eval.quality_classifier            # rebuild the shipped classifier and its report
    python -m pretrain_eval.quality_classifier --check    # exit 1 when the shipped one differs from a fresh build
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import pyarrow as pa
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from threadpoolctl import threadpool_limits

from pretrain_core import schema, storage
from pretrain_core.licences import NOASSERTION
from pretrain_core.quality.classifier import (
    CLASSIFIER_SIGNALS,
    SHIPPED_CLASSIFIER,
    SIGNAL_NAMES,
    SignalClassifier,
    to_bytes,
)
from pretrain_core.quality.config import SELF, QualityConfig
from pretrain_core.quality.cutoffs import CODE, PROSE
from pretrain_core.quality.stage import QualityStage, fit_quality
from pretrain_eval.quality_classifier.training_data import TrainingDoc, training_docs

REPORT_FILE = "quality_classifier_report.json"
REGULARISATION = 1.0  # sklearn's C: the default; the signals are few and standardised
MIN_SCALE = 1e-6


@dataclass(frozen=True)
class TrainingSet:
    """The training documents and, per group, their signal matrix (rows in the order of `docs` of the group)."""

    docs: list[TrainingDoc]
    signals: dict[str, np.ndarray]

    def rows(self, group: str) -> list[TrainingDoc]:
        return [doc for doc in self.docs if doc.group == group]


def training_set(seed: int = 0) -> TrainingSet:
    """The training documents and their signals as the quality stage measures them, its reference models fitted
    on the good documents and cross-fitted, so that no document's perplexity signals come from counts that saw
    it (as no input document's do at run time)."""
    docs = sorted(training_docs(seed), key=lambda doc: doc.group)
    table = _as_stage_input(docs)
    with tempfile.TemporaryDirectory() as tmp:
        shard = storage.join(tmp, "input", "part-00000.parquet")
        storage.write_parquet(shard, table)
        artifacts = fit_quality([shard], TRAINING_QUALITY, storage.join(tmp, "artifacts"))
        scored = QualityStage(TRAINING_QUALITY, artifacts).process(table).kept
    by_id = dict(zip(scored.column("id").to_pylist(), scored.column("quality_signals").to_pylist(), strict=True))
    signals = {}
    for group in (PROSE, CODE):
        rows = [by_id[f"{i}"] for i, doc in enumerate(docs) if doc.group == group]
        signals[group] = np.array([[np.nan if r[n] is None else r[n] for n in SIGNAL_NAMES[group]] for r in rows])
    return TrainingSet(docs, signals)


# The stage as it runs, but fitted on the training set's own good documents (cross-fitted), keeping every bucket
# and without a classifier (the one being built).
TRAINING_QUALITY = QualityConfig.model_validate(
    {
        "prose_reference": {"urls": [SELF], "sources": ["good"]},
        "code_reference": {"urls": [SELF], "sources": ["good"]},
        "keep_buckets": {},
        "classifier": False,
        "detect_language": False,
    }
)


def _as_stage_input(docs: Sequence[TrainingDoc]) -> pa.Table:
    """The documents as the quality stage's input (the PII stage's output), ids their positions."""
    n = len(docs)
    code = [doc.group == CODE for doc in docs]
    columns = {
        "id": [f"{i}" for i in range(n)],
        "text": [doc.text for doc in docs],
        "source": ["good" if doc.label else "bad" for doc in docs],
        "domain": ["code" if is_code else "general" for is_code in code],
        "licence": [NOASSERTION] * n,
        "location": [f"training#{i}" for i in range(n)],
        "code_language": [doc.lang if is_code else None for doc, is_code in zip(docs, code, strict=True)],
        "lang": ["code" if is_code else doc.lang for doc, is_code in zip(docs, code, strict=True)],
        "lang_score": [1.0] * n,
        "dup_cluster": [f"{i}" for i in range(n)],
        "dup_cluster_size": [1] * n,
        "pii_count": [0] * n,
        "pii_types": [[] for _ in range(n)],
    }
    return pa.Table.from_pydict(columns, schema=schema.PII)


def fit_group(features: np.ndarray, labels: np.ndarray, names: Sequence[str]) -> SignalClassifier:
    """A balanced logistic regression over standardised signals, fitted on one thread (same bytes each run)."""
    mean = np.nan_to_num(np.nanmean(features, axis=0))
    scale = np.maximum(np.nan_to_num(np.nanstd(features, axis=0)), MIN_SCALE)
    with threadpool_limits(1):
        model = LogisticRegression(C=REGULARISATION, class_weight="balanced", max_iter=5000)
        model.fit(np.nan_to_num((features - mean) / scale, nan=0.0), labels)  # NaN: neutral, as when scoring
    return SignalClassifier(tuple(names), mean, scale, model.coef_[0].astype(np.float64), float(model.intercept_[0]))


def fit_classifiers(
    data: TrainingSet, keep: Callable[[TrainingDoc], bool] = lambda doc: True
) -> dict[str, SignalClassifier]:
    """One classifier per group, on the training documents `keep` accepts (a kind or source left out)."""
    out = {}
    for group in (PROSE, CODE):
        docs = data.rows(group)
        chosen = np.array([keep(doc) for doc in docs], dtype=bool)
        labels = np.array([doc.label for doc in docs])[chosen]
        read = [SIGNAL_NAMES[group].index(name) for name in CLASSIFIER_SIGNALS[group]]
        out[group] = fit_group(data.signals[group][chosen][:, read], labels, CLASSIFIER_SIGNALS[group])
    return out


def report(data: TrainingSet, classifiers: dict[str, SignalClassifier]) -> dict[str, object]:
    """In-sample figures (training AUC overall and per generated kind) and the signals' weights, for the record:
    the held-out figures are the labelled set's, in `pretrain stage-report --stage quality`."""
    out: dict[str, object] = {}
    for group, model in classifiers.items():
        docs = data.rows(group)
        logits = model.logits(data.signals[group], SIGNAL_NAMES[group])
        labels = np.array([doc.label for doc in docs])
        kinds = sorted({doc.kind for doc in docs} - {"good"})
        per_kind = {}
        for kind in kinds:
            rows = [i for i, doc in enumerate(docs) if doc.kind in ("good", kind)]
            per_kind[kind] = round(float(roc_auc_score(labels[rows], logits[rows])), 4)
        out[group] = {
            "documents": {"good": int(labels.sum()), "bad": int(len(labels) - labels.sum())},
            "training_auc": round(float(roc_auc_score(labels, logits)), 4),
            "training_auc_by_kind": per_kind,
            "weights": {name: round(float(w), 4) for name, w in zip(model.signals, model.weight, strict=True)},
        }
    return out


def shipped_dir() -> Path:
    return Path(str(resources.files("pretrain_core") / "data"))


def write(classifiers: dict[str, SignalClassifier], figures: dict[str, object], out_dir: Path) -> None:
    (out_dir / SHIPPED_CLASSIFIER).write_bytes(to_bytes(classifiers))
    (out_dir / REPORT_FILE).write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def differences(built: dict[str, SignalClassifier], shipped: dict[str, SignalClassifier]) -> list[str]:
    """What differs beyond floating-point noise between two sets of classifiers."""
    problems = []
    for group in sorted(set(built) | set(shipped)):
        if group not in built or group not in shipped:
            problems.append(f"{group}: present on one side only")
            continue
        a, b = built[group], shipped[group]
        if a.signals != b.signals:
            problems.append(f"{group}: signals differ")
            continue
        for name in ("mean", "scale", "weight"):
            if not np.allclose(getattr(a, name), getattr(b, name), rtol=1e-6, atol=1e-9):
                problems.append(f"{group}: {name} differs")
        if not np.isclose(a.bias, b.bias, rtol=1e-6, atol=1e-9):
            problems.append(f"{group}: bias differs")
    return problems
