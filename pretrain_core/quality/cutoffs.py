"""Which model scores a document and where its buckets start: the routing and cut-offs saved in cutoffs.json.

A document belongs to a domain group (prose or code) and, within it, to a bucket key: its language for prose,
its programming language for code. Its model is the key's own model if one was trained, else the group's
multilingual model. Cut-offs are perplexity percentiles measured under that same model, per key when the
sample holds enough documents of the key, else the model's population-weighted global ones ("*"): perplexities
under different models are on different scales and are never compared.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

PROSE, CODE = "prose", "code"
GLOBAL = "*"
FORMAT = "pretrain-quality-cutoffs"


def group_of(domain: str, code_domains: list[str]) -> str:
    return CODE if domain in code_domains else PROSE


def bucket_key(group: str, lang: str, code_language: str | None) -> str:
    """The key a document's cut-offs are looked up by (its language, or programming language for code)."""
    if group == CODE:
        return code_language or GLOBAL
    return lang


def percentile_cutoffs(
    perplexities: np.ndarray, percentiles: tuple[float, float], weights: np.ndarray | None = None
) -> tuple[float, float]:
    """The two perplexity thresholds (inverted-CDF percentiles, optionally weighted)."""
    low, high = np.percentile(perplexities, list(percentiles), weights=weights, method="inverted_cdf")
    return float(low), float(high)


@dataclass(frozen=True)
class QualityIndex:
    """The fitted routing and cut-offs, plus what each model was trained on (for the record)."""

    percentiles: tuple[float, float]
    models: dict[str, dict[str, Any]]  # model name -> tokenizer kind, sizes, reference counts
    routes: dict[str, dict[str, str]]  # group -> bucket key -> model name, for keys with their own model
    cutoffs: dict[str, dict[str, tuple[float, float]]]  # model name -> bucket key or "*" -> (low, high)
    sample: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)  # group -> key -> docs, population

    def model_for(self, group: str, key: str) -> str:
        model = self.routes.get(group, {}).get(key, group)
        if model not in self.models:
            raise KeyError(f"quality: no {group} model was fitted (the fit saw no {group} documents)")
        return model

    def thresholds(self, model: str, key: str) -> tuple[float, float]:
        by_key = self.cutoffs[model]
        return by_key[key] if key in by_key else by_key[GLOBAL]

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "percentiles": list(self.percentiles),
            "models": self.models,
            "routes": self.routes,
            "cutoffs": {m: {k: list(v) for k, v in by_key.items()} for m, by_key in self.cutoffs.items()},
            "sample": self.sample,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> QualityIndex:
        if data.get("format") != FORMAT:
            raise ValueError(f"not a {FORMAT} file: {data.get('format')!r}")
        low, high = data["percentiles"]
        return cls(
            percentiles=(float(low), float(high)),
            models=data["models"],
            routes=data["routes"],
            cutoffs={
                m: {k: (float(v[0]), float(v[1])) for k, v in by_key.items()} for m, by_key in data["cutoffs"].items()
            },
            sample=data.get("sample", {}),
        )
