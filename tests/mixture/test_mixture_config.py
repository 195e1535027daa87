import pytest
from pydantic import ValidationError

from pretrain_core.mixture.config import MixtureConfig


def test_defaults_are_the_documented_mixture() -> None:
    cfg = MixtureConfig()
    assert cfg.weights == {"code": 0.1, "general": 0.6, "specialist": 0.3}
    assert cfg.total_tokens is None and cfg.max_upsample == 4.0


def test_weights_not_summing_to_one_are_refused_naming_the_field() -> None:
    with pytest.raises(ValidationError, match=r"weights\n.*must sum to 1.*0\.9"):
        MixtureConfig(weights={"general": 0.6, "specialist": 0.2, "code": 0.1})


def test_sum_within_tolerance_is_accepted() -> None:
    assert MixtureConfig(weights={"general": 0.7 + 5e-7, "code": 0.3}).weights["general"] > 0.7


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        ({"general": 1.2, "code": -0.2}, "non-negative"),
        ({"general": 0.5, "legal": 0.5}, "unknown domain.*legal"),
        ({"general": float("nan"), "code": 1.0}, "finite"),
    ],
)
def test_bad_weights_are_refused(weights: dict[str, float], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        MixtureConfig(weights=weights)


def test_unknown_keys_and_out_of_range_values_are_refused() -> None:
    with pytest.raises(ValidationError, match="extra"):
        MixtureConfig.model_validate({"weigths": {"general": 1.0}})
    with pytest.raises(ValidationError, match="max_upsample"):
        MixtureConfig(max_upsample=0.5)
    with pytest.raises(ValidationError, match="total_tokens"):
        MixtureConfig(total_tokens=0)
