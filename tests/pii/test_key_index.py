"""The tagger's hashed key index gives every key the row the binary search (`feature_rows`) gives."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pretrain_core.pii.classifier import NameAddressTagger, feature_rows
from pretrain_core.pii.key_index import KeyIndex


def test_the_shipped_models_keys_and_strangers(tagger: NameAddressTagger) -> None:
    known = tagger.keys
    rng = np.random.default_rng(0)
    keys = rng.integers(known.min() - 10, known.max() + 10, size=(5000, 7))
    keys[:2500] = known[rng.integers(0, len(known), size=(2500, 7))]
    rows = tagger.index.rows_of(keys)
    assert np.array_equal(rows, feature_rows(known, keys)) and (rows > 0).mean() > 0.4


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(-(2**63), 2**63 - 1), max_size=40, unique=True),
    st.lists(st.integers(-(2**63), 2**63 - 1), max_size=40),
)
def test_any_keys(known: list[int], others: list[int]) -> None:
    known_keys = np.array(sorted(known), dtype=np.int64)
    keys = np.array(others + known, dtype=np.int64)
    assert np.array_equal(KeyIndex.of(known_keys).rows_of(keys), feature_rows(known_keys, keys))
