"""The learned quality classifier (DCLM's idea at fastText-class cost): per domain group, a logistic regression
over the document's standardised quality signals (signals.py) saying how likely the document is curated text
rather than junk. Trained once, offline (`python -m pretrain_eval.quality_classifier`), on the shipped reference
against low-quality text made from it, and shipped as safetensors: loading it runs no code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

import numpy as np
import safetensors.numpy
from safetensors import SafetensorError

from pretrain_core.quality.cutoffs import CODE, PROSE
from pretrain_core.quality.signals import CODE_SIGNAL_NAMES, PROSE_SIGNAL_NAMES

SHIPPED_CLASSIFIER = "quality_classifier.safetensors"
FORMAT = "pretrain-quality-classifier-1"
SIGNAL_NAMES = {PROSE: PROSE_SIGNAL_NAMES, CODE: CODE_SIGNAL_NAMES}


@dataclass(frozen=True)
class SignalClassifier:
    """Logistic regression over standardised signals: logit = ((x - mean) / scale) . weight + bias."""

    signals: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    weight: np.ndarray
    bias: float

    def logits(self, features: np.ndarray) -> np.ndarray:
        """Log-odds of "curated" for each row of `features` (documents x signals, in `signals` order)."""
        return ((features - self.mean) / self.scale) @ self.weight + self.bias


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
        if tuple(names) != SIGNAL_NAMES[group]:
            raise ValueError(
                f"the quality classifier's {group} signals {names} are not the library's {list(SIGNAL_NAMES[group])}: "
                "rebuild it with python -m pretrain_eval.quality_classifier"
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
