"""The PII config: defaults that run, placeholders that name the type, and typos refused."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from pretrain_core.pii.config import PiiConfig


def test_defaults_detect_every_kind_and_use_the_tagger() -> None:
    cfg = PiiConfig()
    assert cfg.uses_classifier()
    assert cfg.placeholder("national_id") == "<NATIONAL_ID>"
    assert set(cfg.code_types) == {"email", "phone", "ip", "card", "iban", "national_id", "secret"}


def test_placeholder_format_may_use_lower_case_type() -> None:
    assert PiiConfig(placeholder_format="[{type}]").placeholder("email") == "[email]"


@pytest.mark.parametrize("bad", [{"placeholder_format": "<{kind}>"}, {"types": ["email", "passport"]}, {"tresh": 1}])
def test_invalid_settings_are_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        PiiConfig.model_validate(bad)


def test_tagger_unused_without_its_kinds() -> None:
    assert not PiiConfig(types=["email", "phone"]).uses_classifier()
    assert not PiiConfig(classifier_enabled=False).uses_classifier()
