from __future__ import annotations

import pickle

import pytest
from pydantic import ValidationError

from pretrain_core.clean.config import CleanConfig, ProseRulesConfig


def test_defaults_are_gopher_and_keep_every_language() -> None:
    cfg = CleanConfig()
    assert cfg.normalize.unicode_form == "NFC" and cfg.normalize.code_unicode_form == "NFC"
    assert cfg.langid.allowed == [] and cfg.langid.prefix_chars == 1000
    assert cfg.prose.default.min_words == 50 and cfg.prose.default.max_top_ngram_char_share[2] == 0.20
    assert cfg.prose.stop_words == {"en": ["the", "be", "to", "of", "and", "that", "have", "with"]}
    assert cfg.prose.c4_lines.enabled is False


def test_nfkc_is_refused_for_code() -> None:
    with pytest.raises(ValidationError, match="code_unicode_form"):
        CleanConfig.model_validate({"normalize": {"code_unicode_form": "NFKC"}})


def test_unknown_keys_and_out_of_range_values_are_refused() -> None:
    with pytest.raises(ValidationError, match="min_word"):
        CleanConfig.model_validate({"prose": {"default": {"min_word": 10}}})
    with pytest.raises(ValidationError, match="min_confidence"):
        CleanConfig.model_validate({"langid": {"min_confidence": 1.5}})
    with pytest.raises(ValidationError, match="min_words exceeds max_words"):
        CleanConfig.model_validate({"prose": {"default": {"min_words": 10, "max_words": 5}}})


def test_per_language_overrides_are_partial_and_validated() -> None:
    prose = ProseRulesConfig.model_validate({"per_language": {"zh": {"min_words": 200}}})
    zh = prose.thresholds_for("zh")
    assert zh.min_words == 200
    assert zh.max_duplicate_line_fraction == prose.default.max_duplicate_line_fraction
    assert prose.thresholds_for("en") == prose.default
    with pytest.raises(ValidationError, match="min_wrods"):
        ProseRulesConfig.model_validate({"per_language": {"zh": {"min_wrods": 200}}})
    with pytest.raises(ValidationError):
        ProseRulesConfig.model_validate({"per_language": {"zh": {"min_words": -1}}})


def test_default_relaxes_korean_word_length_only() -> None:
    prose = ProseRulesConfig()
    assert prose.thresholds_for("ko").min_mean_word_length < prose.default.min_mean_word_length
    assert prose.thresholds_for("de") == prose.default


def test_config_round_trips_through_json_and_pickle() -> None:
    cfg = CleanConfig.model_validate({"langid": {"allowed": ["en", "zh"]}, "prose": {"per_language": {"ja": {}}}})
    assert CleanConfig.model_validate_json(cfg.model_dump_json()) == cfg
    assert pickle.loads(pickle.dumps(cfg)) == cfg
