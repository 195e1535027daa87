"""The PII stage's default configuration, validated once per session."""

from __future__ import annotations

import pytest

from pretrain_core.pii.config import PiiConfig


@pytest.fixture(scope="session")
def pii_config() -> PiiConfig:
    return PiiConfig()
