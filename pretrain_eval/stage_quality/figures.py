"""One measured figure of a stage on its labelled set, the bar it must meet, and the arithmetic behind it.

Every stage evaluator returns a flat list of `Figure`s: ours and a baseline's side by side, grouped the same way,
so one table shows the gain and one check says whether the stage meets its bar.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from sklearn.metrics import roc_auc_score

OURS = "pretrain"


@dataclass(frozen=True)
class Bar:
    """The least (`>=`) or most (`<=`) a figure may be."""

    op: Literal[">=", "<="]
    value: float

    def met_by(self, value: float) -> bool:
        return value >= self.value if self.op == ">=" else value <= self.value

    def __str__(self) -> str:
        return f"{self.op} {self.value:g}"


@dataclass(frozen=True)
class Figure:
    """`metric` of `system` on the `group` slice of a stage's labelled set (e.g. dedup, jaccard>=0.8, f1)."""

    stage: str
    group: str
    system: str
    metric: str
    value: float
    bar: Bar | None = None
    support: int = 0  # how many labelled items the figure rests on

    @property
    def meets_bar(self) -> bool | None:
        """None for figures with no bar (baselines, counts)."""
        return None if self.bar is None else self.bar.met_by(self.value)


def precision_recall(true_positives: int, false_positives: int, false_negatives: int) -> tuple[float, float]:
    """Precision and recall, 1.0 where nothing was predicted or nothing was there to find (no error made)."""
    predicted = true_positives + false_positives
    actual = true_positives + false_negatives
    precision = true_positives / predicted if predicted else 1.0
    recall = true_positives / actual if actual else 1.0
    return precision, recall


def f_beta(precision: float, recall: float, beta: float = 1.0) -> float:
    """F1 by default; beta=2 weighs recall as Presidio recommends for PII."""
    if precision == 0.0 and recall == 0.0:
        return 0.0
    b2 = beta * beta
    return (1 + b2) * precision * recall / (b2 * precision + recall)


def roc_auc(labels: Sequence[int], scores: Sequence[float]) -> float:
    """Probability that a random positive (label 1) scores above a random negative; needs both classes."""
    if len(set(labels)) < 2:
        raise ValueError("ROC-AUC needs both positive and negative examples")
    return float(roc_auc_score(labels, scores))
