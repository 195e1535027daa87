import pytest
from pydantic import ValidationError

from pretrain_core.tokenize.config import PackConfig, TokenizerConfig


def test_defaults_suit_the_demo() -> None:
    assert TokenizerConfig().vocab_size == 8000 and TokenizerConfig().model_type == "bpe"
    assert PackConfig().seq_len == 512 and PackConfig().add_bos and PackConfig().add_eos


def test_small_cpu_context_is_allowed_but_not_a_degenerate_one() -> None:
    assert PackConfig(seq_len=128).seq_len == 128
    with pytest.raises(ValidationError, match="seq_len"):
        PackConfig(seq_len=8)


def test_held_out_fractions_must_leave_training_data() -> None:
    with pytest.raises(ValidationError, match="nothing is left to train on"):
        PackConfig(validation_fraction=0.5, test_fraction=0.5)


def test_normalisation_cannot_be_switched_on_by_a_typo() -> None:
    with pytest.raises(ValidationError, match="normalization_rule_name"):
        TokenizerConfig.model_validate({"normalization_rule_name": "nfkc"})
    with pytest.raises(ValidationError, match="model_type"):
        TokenizerConfig(model_type="wordpiece")  # type: ignore[arg-type]
