"""Routing and cut-offs: percentiles, bucket boundaries, fallbacks, and the cutoffs.json round trip."""

from __future__ import annotations

import numpy as np
import pytest

from pretrain_core.quality.cutoffs import (
    CODE,
    GLOBAL,
    PROSE,
    QualityIndex,
    bucket_key,
    group_of,
    percentile_cutoffs,
)


def test_percentiles_and_weighting() -> None:
    values = np.arange(1, 101, dtype=np.float64)
    assert percentile_cutoffs(values, (30.0, 60.0)) == (30.0, 60.0)
    # Weighting the first half 3:1 moves both cut-offs down, as a larger population of low values would.
    weights = np.where(values <= 50, 3.0, 1.0)
    low, high = percentile_cutoffs(values, (30.0, 60.0), weights)
    assert low == 20.0 and high == 40.0


def test_groups_and_keys() -> None:
    assert group_of("code", ["code"]) == CODE and group_of("general", ["code"]) == PROSE
    assert bucket_key(PROSE, "zh", None) == "zh"
    assert bucket_key(CODE, "en", "python") == "python"
    assert bucket_key(CODE, "en", None) == GLOBAL


def test_routing_fallbacks_and_json_round_trip() -> None:
    index = QualityIndex(
        percentiles=(30.0, 60.0),
        models={"prose": {"tokenizer": "sentencepiece"}, "prose.zh": {"tokenizer": "characters"}},
        routes={PROSE: {"zh": "prose.zh"}},
        cutoffs={"prose": {GLOBAL: (100.0, 200.0), "en": (80.0, 150.0)}, "prose.zh": {"zh": (20.0, 40.0)}},
    )
    assert index.model_for(PROSE, "zh") == "prose.zh"
    assert index.model_for(PROSE, "de") == "prose"
    assert index.thresholds("prose", "en") == (80.0, 150.0)
    assert index.thresholds("prose", "de") == (100.0, 200.0)
    with pytest.raises(KeyError, match="no code model"):
        index.model_for(CODE, "python")
    assert QualityIndex.from_json(index.to_json()) == index
    with pytest.raises(ValueError):
        QualityIndex.from_json({**index.to_json(), "format": "other"})
