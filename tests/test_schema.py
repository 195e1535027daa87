from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pytest

from pretrain_core import schema
from pretrain_core.stages import CORPUS, StageSpec

DOC = (Path(__file__).resolve().parent.parent / "docs" / "schema.md").read_text(encoding="utf-8")


def _documented_columns(section: str) -> list[tuple[str, str, str]]:
    body = DOC.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([a-z_]+)` \| ([a-z0-9<>]+) \| (yes|no) \|", body, flags=re.M)


def _type_name(type_: pa.DataType) -> str:
    """Arrow's names as the docs write them: `float` is float32, lists as list<item type>."""
    if pa.types.is_list(type_):
        return f"list<{_type_name(type_.value_type)}>"
    if pa.types.is_struct(type_) and len({str(field.type) for field in type_}) == 1:
        return f"struct<{_type_name(type_.field(0).type)}>"  # a struct of like fields, however many
    return {"float": "float32"}.get(str(type_), str(type_))


@pytest.mark.parametrize("spec", CORPUS.stages, ids=CORPUS.names)
def test_docs_describe_every_column_the_code_enforces(spec: StageSpec) -> None:
    own, previous = spec.output_schema, spec.input_schema
    new_table = previous is None or spec.name == "tokenize"  # documents in, or sequences out: every column is new
    added = own if new_table else pa.schema([f for f in own if f.name not in previous.names])
    documented = _documented_columns(spec.name)
    assert [name for name, _, _ in documented] == added.names
    for (name, type_, null), field in zip(documented, added, strict=True):
        assert type_ == _type_name(field.type), name
        assert (null == "yes") == field.nullable, name


def test_validate_refuses_wrong_types_and_nulls() -> None:
    good = pa.table(
        {
            "input_ids": [[1, 2]],
            "domain": ["code"],
            "source": ["s"],
            "licences": [["MIT"]],
            "doc_ids": [["a"]],
            "split": ["train"],
            "quality_bucket": ["head"],
            "quality_score": [0.9],
        }
    )
    good = good.cast(schema.TOKENS)
    assert schema.validate(good, schema.TOKENS, "t").num_rows == 1
    with pytest.raises(schema.SchemaError, match="type"):
        schema.validate(good.set_column(0, "input_ids", pa.array([[1.0, 2.0]])), schema.TOKENS, "t")
    with pytest.raises(schema.SchemaError, match="nulls"):
        schema.validate(good.set_column(1, "domain", pa.array([None], pa.string())), schema.TOKENS, "t")
