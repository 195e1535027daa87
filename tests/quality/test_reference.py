"""Reference files (JSONL, gzipped JSONL, Parquet, globs) and training a reference model from texts."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow as pa
import pytest

from pretrain_core import storage
from pretrain_core.quality.config import QualityConfig, ReferenceConfig
from pretrain_core.quality.reference import read_reference_file, reference_files, train_reference_model


def _write_reference(folder: Path, english: list[str], chinese: list[str]) -> None:
    folder.mkdir(parents=True)
    with gzip.open(folder / "wiki-en.jsonl.gz", "wt", encoding="utf-8") as handle:
        for text in english[:30]:
            handle.write(json.dumps({"body": text, "lang": "en"}) + "\n")
        handle.write("\n")  # a blank line is skipped, not an error
        handle.write(json.dumps({"body": "   ", "lang": "en"}) + "\n")  # so is an empty text
    (folder / "wiki-zh.jsonl").write_text(
        "".join(json.dumps({"body": t}, ensure_ascii=False) + "\n" for t in chinese[:20]), encoding="utf-8"
    )
    storage.write_parquet(str(folder / "extra.parquet"), pa.table({"body": english[30:40], "lang": ["en"] * 10}))
    (folder / "notes.txt").write_text("not a reference file")


def test_globs_expand_to_reference_files_and_records_are_read(
    tmp_path: Path, english: list[str], chinese: list[str]
) -> None:
    _write_reference(tmp_path / "ref", english, chinese)
    ref = ReferenceConfig(urls=["self", f"{tmp_path}/ref/*"], domains=["general"], text_field="body")
    files = reference_files(ref)
    assert [Path(f).name for f in files] == ["extra.parquet", "wiki-en.jsonl.gz", "wiki-zh.jsonl"]
    records = {Path(f).name: list(read_reference_file(f, ref)) for f in files}
    assert [r.text for r in records["wiki-en.jsonl.gz"]] == english[:30]
    assert {r.lang for r in records["wiki-en.jsonl.gz"]} == {"en"}
    assert [r.text for r in records["wiki-zh.jsonl"]] == chinese[:20]
    assert {r.lang for r in records["wiki-zh.jsonl"]} == {None}  # no label: only the multilingual model uses it
    assert [r.text for r in records["extra.parquet"]] == english[30:40]
    assert len({r.key for rs in records.values() for r in rs}) == 60


def test_missing_files_and_fields_are_errors(tmp_path: Path, english: list[str], chinese: list[str]) -> None:
    _write_reference(tmp_path / "ref", english, chinese)
    with pytest.raises(FileNotFoundError, match="matches no"):
        reference_files(ReferenceConfig(urls=[f"{tmp_path}/nothing/*.jsonl"], domains=["general"]))
    wrong_field = ReferenceConfig(urls=[f"{tmp_path}/ref/*"], domains=["general"], text_field="content")
    for file in reference_files(wrong_field):
        with pytest.raises(ValueError, match="content"):
            list(read_reference_file(file, wrong_field))


def test_trained_model_prefers_its_own_language(english: list[str], chinese: list[str]) -> None:
    cfg = QualityConfig(vocab_size=800, order=3, tokenizer_max_chars=50_000)
    model = train_reference_model(english[:800], "sentencepiece", cfg)
    assert model.tokenizer.vocab_size <= 800 and model.lm.order == 3
    english_ppl, chinese_ppl = model.perplexities(["\n".join(english[900:910]), "\n".join(chinese[:10])])
    assert chinese_ppl > 5 * english_ppl
