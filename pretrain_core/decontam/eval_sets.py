"""Evaluation sets read as item texts in batches: JSONL or Parquet records (fields joined), or blank-line separated
text. A record holding none of the named fields is refused by name and line: a mistyped field would otherwise
index nothing and keep every overlap."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pyarrow.parquet as pq

from pretrain_core import storage
from pretrain_core.decontam.config import EvalSetConfig

BATCH_ITEMS = 4096
PARAGRAPH = re.compile(r"\n\s*\n")


class EvalSetError(ValueError):
    """An evaluation set that cannot be read as items; the message names the set, the file and the record."""


def format_of(cfg: EvalSetConfig) -> str:
    if cfg.format != "auto":
        return cfg.format
    name = cfg.path.lower()
    if name.endswith((".jsonl", ".jsonl.gz", ".json", ".json.gz", ".ndjson")):
        return "jsonl"
    return "parquet" if name.endswith(".parquet") else "text"


def item_batches(cfg: EvalSetConfig) -> Iterator[list[str]]:
    """The set's item texts, ``BATCH_ITEMS`` at a time."""
    if not storage.exists(cfg.path):
        raise EvalSetError(f"evaluation set {cfg.name!r}: {cfg.path} not found")
    reader = {"jsonl": _jsonl_items, "parquet": _parquet_items, "text": _text_items}[format_of(cfg)]
    batch: list[str] = []
    for text in reader(cfg):
        if text.strip():
            batch.append(text)
        if len(batch) == BATCH_ITEMS:
            yield batch
            batch = []
    if batch:
        yield batch


def _joined(record: dict[str, Any], cfg: EvalSetConfig, where: str) -> str:
    present = [record[f] for f in cfg.text_fields if record.get(f) is not None]
    if not present:
        raise EvalSetError(
            f"evaluation set {cfg.name!r}: {where} holds none of the fields {cfg.text_fields} "
            f"(it has {sorted(record)[:8]}): set text_fields"
        )
    parts = [v for value in present for v in (value if isinstance(value, list) else [value])]
    return "\n".join(str(p) for p in parts)


def _jsonl_items(cfg: EvalSetConfig) -> Iterator[str]:
    fs, path = storage.filesystem(cfg.path)
    with fs.open(path, "rt", encoding="utf-8", compression="infer") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise EvalSetError(
                    f"evaluation set {cfg.name!r}: {cfg.path} line {number} is not JSON: {exc}"
                ) from None
            if not isinstance(record, dict):
                raise EvalSetError(f"evaluation set {cfg.name!r}: {cfg.path} line {number} is not a JSON object")
            yield _joined(record, cfg, f"{cfg.path} line {number}")


def _parquet_items(cfg: EvalSetConfig) -> Iterator[str]:
    fs, path = storage.filesystem(cfg.path)
    with fs.open(path, "rb") as handle:
        parquet = pq.ParquetFile(handle)
        columns = [f for f in cfg.text_fields if f in parquet.schema_arrow.names]
        if not columns:
            raise EvalSetError(
                f"evaluation set {cfg.name!r}: {cfg.path} has none of the columns {cfg.text_fields} "
                f"(it has {parquet.schema_arrow.names[:8]}): set text_fields"
            )
        row = 0
        for batch in parquet.iter_batches(columns=columns):
            for record in batch.to_pylist():
                row += 1
                yield _joined(record, cfg, f"{cfg.path} row {row}")


def _text_items(cfg: EvalSetConfig) -> Iterator[str]:
    fs, path = storage.filesystem(cfg.path)
    with fs.open(path, "rt", encoding="utf-8", compression="infer") as handle:
        yield from PARAGRAPH.split(handle.read())
