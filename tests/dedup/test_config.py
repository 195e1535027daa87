from __future__ import annotations

import pytest
from pydantic import ValidationError

from pretrain_core.dedup.config import DedupConfig


def test_defaults_build_and_document_every_field() -> None:
    cfg = DedupConfig()
    assert (cfg.method, cfg.num_perm, cfg.threshold, cfg.word_ngram) == ("minhash", 128, 0.8, 5)
    assert cfg.lsh_params is None and cfg.similarity_threshold == 0.8
    assert all(field.description for field in DedupConfig.model_fields.values())


def test_bands_and_rows_come_together_and_fit_the_signature() -> None:
    assert DedupConfig(bands=16, rows=8).lsh_params == (16, 8)
    with pytest.raises(ValidationError, match="both"):
        DedupConfig(bands=16)
    with pytest.raises(ValidationError, match="exceeds num_perm"):
        DedupConfig(bands=20, rows=8)


def test_unknown_keys_and_out_of_range_values_are_refused() -> None:
    with pytest.raises(ValidationError):
        DedupConfig(treshold=0.7)  # type: ignore[call-arg]
    for bad in ({"threshold": 1.0}, {"method": "lsh"}, {"num_perm": 8}, {"simhash_bits": 48}):
        with pytest.raises(ValidationError):
            DedupConfig(**bad)


def test_simhash_sketch_threshold_is_in_hamming_units() -> None:
    cfg = DedupConfig(method="simhash", verify_with="sketch", simhash_max_hamming=4)
    assert cfg.similarity_threshold == 1 - 4 / 64
    assert DedupConfig(method="simhash").similarity_threshold == 0.8  # verified by exact Jaccard
