"""Config of the token-budget mixture: target token shares per domain and how far small domains may be repeated."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field, field_validator

from pretrain_core.config_base import Seed, StrictModel
from pretrain_core.limits import MAX_CORPUS_TOKENS
from pretrain_core.schema import DOMAINS

WEIGHT_SUM_TOLERANCE = 1e-6


class MixtureConfig(StrictModel):
    """Token shares per domain for the training set and the limits of up-sampling."""

    weights: dict[str, float] = Field(
        default_factory=lambda: {"general": 0.6, "specialist": 0.3, "code": 0.1},
        description="Target share of training tokens per domain; must sum to 1. A domain left out gets 0.",
    )
    total_tokens: int | None = Field(
        default=None,
        gt=0,
        le=MAX_CORPUS_TOKENS,
        description="Token budget; None means the largest budget every domain can fill within max_upsample. "
        "A budget that would need more repeats is shrunk (the plan says so).",
    )
    materialise: bool = Field(
        default=True,
        description="Repeat or sample documents so the shards hold the weights. false: every training document "
        "once, whatever the weights, for a run that mixes at train time (train.data.mixing).",
    )
    max_upsample: float = Field(
        default=4.0, ge=1.0, le=1000.0, description="Most epochs over any domain; beyond ~4 repeats data loses value."
    )
    missing_domain: Literal["renormalise", "fail"] = Field(
        default="renormalise",
        description="A weighted domain without any tokens: share its weight over the others (noted in the plan) "
        "or fail.",
    )
    share_tolerance: float = Field(
        default=0.005,
        gt=0.0,
        le=0.1,
        description="Allowed gap between realised and target share; the plan flags misses.",
    )
    seed: Seed = Field(default=0, description="Seed of the document sample for the fractional epoch.")
    num_threads: int = Field(default=1, ge=1, le=256, description="SentencePiece threads for counting tokens.")

    @field_validator("weights")
    @classmethod
    def _weights_are_a_distribution(cls, weights: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(weights) - set(DOMAINS))
        if unknown:
            raise ValueError(f"weights has unknown domain(s) {unknown}; known domains are {list(DOMAINS)}")
        negative = {d: w for d, w in weights.items() if w < 0 or not math.isfinite(w)}
        if negative:
            raise ValueError(f"weights must be finite and non-negative, got {negative}")
        total = sum(weights.values())
        if abs(total - 1.0) > WEIGHT_SUM_TOLERANCE:
            raise ValueError(
                f"weights must sum to 1 (±{WEIGHT_SUM_TOLERANCE:g}), they sum to {total:.6g}: {weights}; the table is "
                'set whole, every domain in it: --set "mixture.weights={general: 0.6, specialist: 0.2, code: 0.2}"'
            )
        return dict(sorted(weights.items()))
