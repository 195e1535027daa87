from __future__ import annotations

import pytest
from pydantic import ValidationError

from pretrain_core.ingest.config import IngestConfig, SourceConfig


def test_defaults_build_and_document_every_field() -> None:
    cfg = IngestConfig()
    assert cfg.max_doc_bytes == 1_000_000 and cfg.docs_per_shard == 2000
    for model in (IngestConfig, SourceConfig):
        assert all(field.description for field in model.model_fields.values()), model.__name__


def test_source_name_must_be_a_plain_identifier() -> None:
    SourceConfig(name="web_2024", domain="general", format="warc", path="crawl/*.warc.gz")
    for bad in ("Web", "web-2024", "web.2024", ""):
        with pytest.raises(ValidationError):
            SourceConfig(name=bad, domain="general", format="warc", path="crawl")


def test_unknown_keys_formats_and_domains_are_refused() -> None:
    with pytest.raises(ValidationError):
        SourceConfig(name="a", domain="general", format="jsonl", path="x", textfield="body")  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        SourceConfig(name="a", domain="general", format="csv", path="x")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        SourceConfig(name="a", domain="news", format="jsonl", path="x")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        IngestConfig(max_doc_bytes=0)
