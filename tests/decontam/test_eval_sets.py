"""Evaluation sets read as items: JSONL and Parquet records with the named fields joined, blank-line separated text,
and one-line errors naming the set, the file and the record when they cannot be read."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pretrain_core.decontam.config import EvalSetConfig
from pretrain_core.decontam.eval_sets import EvalSetError, item_batches


def _items(cfg: EvalSetConfig) -> list[str]:
    return [item for batch in item_batches(cfg) for item in batch]


def test_jsonl_records_join_their_fields_lists_included(tmp_path: Path) -> None:
    path = tmp_path / "task.jsonl.gz"
    records = [{"question": "Which is red?", "choices": ["apple", "sky"], "answer": 0}, {"question": "Two?"}]
    with gzip.open(path, "wt", encoding="utf-8") as out:
        out.write("\n".join(json.dumps(r) for r in records) + "\n\n")
    cfg = EvalSetConfig(name="task", path=str(path), text_fields=["question", "choices"])
    assert _items(cfg) == ["Which is red?\napple\nsky", "Two?"]


def test_parquet_columns_and_text_paragraphs(tmp_path: Path) -> None:
    pq.write_table(pa.table({"passage": ["one passage", "another"], "id": [1, 2]}), tmp_path / "set.parquet")
    parquet = EvalSetConfig(name="p", path=str(tmp_path / "set.parquet"), text_fields=["passage"])
    assert _items(parquet) == ["one passage", "another"]
    (tmp_path / "set.txt").write_text("first item\nstill first\n\n\nsecond item\n", encoding="utf-8")
    assert _items(EvalSetConfig(name="t", path=str(tmp_path / "set.txt"))) == [
        "first item\nstill first",
        "second item\n",
    ]


def test_unreadable_sets_are_refused_by_name_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"text": "fine"}\n{"prompt": "no text field"}\n', encoding="utf-8")
    with pytest.raises(EvalSetError, match=r"'bad': .*bad.jsonl line 2 holds none of the fields \['text'\]"):
        _items(EvalSetConfig(name="bad", path=str(path)))
    path.write_text("not json\n", encoding="utf-8")
    with pytest.raises(EvalSetError, match="line 1 is not JSON"):
        _items(EvalSetConfig(name="bad", path=str(path)))
    with pytest.raises(EvalSetError, match="not found"):
        _items(EvalSetConfig(name="gone", path=str(tmp_path / "gone.jsonl")))


def test_heldout_is_a_reserved_name() -> None:
    with pytest.raises(ValueError, match="names the corpus's own validation and test split"):
        EvalSetConfig(name="heldout", path="x.jsonl")
