"""The learned quality classifier (DCLM's idea at fastText-class cost): per domain group, a logistic regression
over the document's standardised quality signals (signals.py) saying how likely the document is curated text
rather than junk. Trained once, offline (`python -m pretrain_eval.quality_classifier`), on the shipped reference
against low-quality text made from it, and shipped as safetensors: loading it runs no code.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

import numpy as np
import safetensors.numpy
from safetensors import SafetensorError

from pretrain_core.quality.cutoffs import CODE, PROSE
from pretrain_core.signal_names import GROUP_SIGNAL_NAMES

SHIPPED_CLASSIFIER = "quality_classifier.safetensors"
FORMAT = "pretrain-quality-classifier-1"
SIGNAL_NAMES = {PROSE: GROUP_SIGNAL_NAMES[PROSE], CODE: GROUP_SIGNAL_NAMES[CODE]}  # each group's signal matrix
# Size is not quality: a length limit is the clean stage's rule, and length learned from generated examples
# (whose sizes are the generator's choice) would reward long spam. The classifier reads every other signal.
UNREAD_SIGNALS = frozenset({"log_words", "log_chars"})
CLASSIFIER_SIGNALS = {
    group: tuple(n for n in names if n not in UNREAD_SIGNALS) for group, names in SIGNAL_NAMES.items()
}


@dataclass(frozen=True)
class SignalClassifier:
    """Logistic regression over standardised signals: logit = ((x - mean) / scale) . weight + bias, x the
    document's values of `signals` (a subset of its group's signals)."""

    signals: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    weight: np.ndarray
    bias: float

    def logits(self, features: np.ndarray, names: Sequence[str]) -> np.ndarray:
        """Log-odds of "curated" for each row of `features` (documents x signals, columns named by `names`); a
        NaN signal (one the document's language cannot have) counts as neutral, at its training mean."""
        columns = [list(names).index(name) for name in self.signals]
        standardised = np.nan_to_num((features[:, columns] - self.mean) / self.scale, nan=0.0)
        return standardised @ self.weight + self.bias


def to_bytes(classifiers: dict[str, SignalClassifier]) -> bytes:
    """The classifiers of each group as safetensors; equal classifiers give equal bytes."""
    tensors: dict[str, np.ndarray] = {}
    for group, model in sorted(classifiers.items()):
        tensors[f"{group}.mean"] = model.mean.astype(np.float64)
        tensors[f"{group}.scale"] = model.scale.astype(np.float64)
        tensors[f"{group}.weight"] = model.weight.astype(np.float64)
        tensors[f"{group}.bias"] = np.array([model.bias], dtype=np.float64)
    signals = {group: list(model.signals) for group, model in sorted(classifiers.items())}
    # One metadata entry: safetensors writes several in no fixed order.
    header = json.dumps({"format": FORMAT, "signals": signals}, sort_keys=True)
    return bytes(safetensors.numpy.save(tensors, metadata={"pretrain": header}))


def from_bytes(data: bytes) -> dict[str, SignalClassifier]:
    try:
        tensors = safetensors.numpy.load(data)
        header = _metadata(data)
    except (SafetensorError, KeyError, ValueError) as exc:
        raise ValueError(f"not a quality classifier (safetensors expected): {exc}") from None
    if header.get("format") != FORMAT:
        raise ValueError(f"not a {FORMAT} model: {header.get('format')!r}")
    out = {}
    for group, names in header["signals"].items():
        if tuple(names) != CLASSIFIER_SIGNALS[group]:
            raise ValueError(
                f"the quality classifier's {group} signals {names} are not the library's "
                f"{list(CLASSIFIER_SIGNALS[group])}: rebuild it with python -m pretrain_eval.quality_classifier"
            )
        out[group] = SignalClassifier(
            tuple(names),
            tensors[f"{group}.mean"],
            tensors[f"{group}.scale"],
            tensors[f"{group}.weight"],
            float(tensors[f"{group}.bias"][0]),
        )
    return out


def _metadata(data: bytes) -> dict[str, Any]:
    """Our entry of the metadata safetensors keeps in its JSON header (8-byte length, then the JSON)."""
    length = int.from_bytes(data[:8], "little")
    meta = json.loads(data[8 : 8 + length]).get("__metadata__", {})
    return dict(json.loads(meta["pretrain"]))


def shipped_classifier_bytes() -> bytes:
    return (files("pretrain_core") / "data" / SHIPPED_CLASSIFIER).read_bytes()


@cache
def shipped_classifiers() -> dict[str, SignalClassifier]:
    """The classifiers the library ships (package data), loaded once per process."""
    return from_bytes(shipped_classifier_bytes())
