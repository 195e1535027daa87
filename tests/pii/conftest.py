"""A PII tagger fitted once per session on the real sentences shipped under data/ (licences, tutors, manual pages)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pretrain_core.pii.classifier import NameAddressTagger
from pretrain_core.pii.config import PiiConfig
from pretrain_core.pii.stage import TAGGER_ARTIFACT, fit_pii

# Few examples per language keeps the fit to seconds; all shipped sentences are read so every language is covered.
SMALL_FIT = {"classifier_sentences_per_source": 3000, "classifier_examples_per_language": 800}


@pytest.fixture(scope="session")
def pii_config() -> PiiConfig:
    return PiiConfig.model_validate(SMALL_FIT)


@pytest.fixture(scope="session")
def artifacts(pii_config: PiiConfig, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return fit_pii(pii_config, str(tmp_path_factory.mktemp("pii-artifacts")))


@pytest.fixture(scope="session")
def tagger(artifacts: dict[str, str]) -> NameAddressTagger:
    return NameAddressTagger.from_bytes(Path(artifacts[TAGGER_ARTIFACT]).read_bytes())
