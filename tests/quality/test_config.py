"""The quality config: usable defaults, and mistakes refused with a message naming them."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from pretrain_core.quality.config import QualityConfig, ReferenceConfig
from pretrain_core.quality.reference import read_reference_file, reference_files


def test_defaults_follow_ccnet_and_drop_only_general_tail() -> None:
    cfg = QualityConfig()
    assert cfg.bucket_percentiles == (30.0, 60.0)
    assert cfg.prose_reference.urls == ["shipped:prose"] and cfg.prose_reference.domains == ["general", "specialist"]
    assert cfg.code_reference.urls == ["shipped:code"] and cfg.code_reference.domains == ["code"]
    assert cfg.keep_buckets["general"] == ["head", "middle"]
    assert cfg.keep_buckets["code"] == ["head", "middle", "tail"]
    assert 3 <= cfg.order <= 5


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"bucket_percentiles": (60.0, 30.0)}, "bucket_percentiles"),
        ({"bucket_percentiles": (0.0, 30.0)}, "bucket_percentiles"),
        ({"prose_reference": ReferenceConfig(urls=["self"], domains=["general", "code"])}, "code domains"),
        ({"code_reference": ReferenceConfig(urls=["self"], domains=["general"])}, "not in code_domains"),
        ({"prose_reference": ReferenceConfig(urls=["s3://b/wiki.txt"], domains=["general"])}, "must end with"),
        ({"prose_reference": ReferenceConfig(urls=["shipped:wiki"], domains=["general"])}, "shipped references"),
        ({"prose_reference": ReferenceConfig(urls=["x.jsonl"], domains=["general"], sources=["a"])}, 'for a "self"'),
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


def test_the_shipped_references_are_files_the_package_holds() -> None:
    cfg = QualityConfig()
    for ref in (cfg.prose_reference, cfg.code_reference):
        (path,) = reference_files(ref)
        records = list(read_reference_file(path, ref))
        assert path.endswith(".jsonl.gz") and len(records) >= 50 and all(r.lang for r in records)


def test_a_reference_given_in_part_keeps_its_groups_other_defaults() -> None:
    cfg = QualityConfig.model_validate({"prose_reference": {"urls": ["self"]}, "code_reference": {"max_chars": 10}})
    assert cfg.prose_reference.domains == ["general", "specialist"] and cfg.prose_reference.urls == ["self"]
    assert cfg.code_reference.urls == ["shipped:code"] and cfg.code_reference.max_chars == 10
