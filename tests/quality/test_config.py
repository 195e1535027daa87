"""The quality config: usable defaults, and mistakes refused with a message naming them."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from pretrain_core.quality.config import QualityConfig, ReferenceConfig


def test_defaults_follow_ccnet_and_drop_only_general_tail() -> None:
    cfg = QualityConfig()
    assert cfg.bucket_percentiles == (30.0, 60.0)
    assert cfg.prose_reference.urls == ["self"] and cfg.prose_reference.domains == ["general", "specialist"]
    assert cfg.code_reference.domains == ["code"]
    assert cfg.keep_buckets["general"] == ["head", "middle"]
    assert cfg.keep_buckets["code"] == ["head", "middle", "tail"]
    assert 3 <= cfg.order <= 5


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"bucket_percentiles": (60.0, 30.0)}, "bucket_percentiles"),
        ({"bucket_percentiles": (0.0, 30.0)}, "bucket_percentiles"),
        ({"prose_reference": ReferenceConfig(domains=["general", "code"])}, "code domains"),
        ({"code_reference": ReferenceConfig(domains=["general"])}, "not in code_domains"),
        ({"prose_reference": ReferenceConfig(urls=["s3://b/wiki.txt"], domains=["general"])}, "must end with"),
        ({"keep_buckets": {"general": []}}, "empty"),
        ({"keep_buckets": {"general": ["best"]}}, "head"),
        ({"order": 1}, "order"),
        ({"perplexity_cap": 5}, "perplexity_cap"),
    ],
)
def test_mistakes_are_refused(changes: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        QualityConfig(**changes)  # type: ignore[arg-type]


def test_file_references_and_globs_are_accepted() -> None:
    ref = ReferenceConfig(urls=["self", "s3://corpora/wiki/*.jsonl.gz", "data/ref/*", "x.parquet"], domains=["g"])
    assert QualityConfig(prose_reference=ref).prose_reference.urls[1].endswith(".jsonl.gz")
