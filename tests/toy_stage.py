"""A toy filter stage for `tests/test_stages.py` and the worked example of docs/architecture.md: drop every
document that mentions a word, keep the rest unchanged. A module with these hooks plus one registry line is a
stage."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from pretrain_core import schema
from pretrain_core.stage import ShardOutput

if TYPE_CHECKING:
    from pretrain_core.config import PipelineConfig

WORD = "lambda"
REASON = "mentions_lambda"


@dataclass(frozen=True)
class WordFilter:
    word: str
    name: str = "word_filter"
    schema: pa.Schema = schema.PII  # a filter between PII and quality keeps the PII contract

    def process(self, table: pa.Table) -> ShardOutput:
        hit = pc.match_substring(table.column("text"), self.word, ignore_case=True)
        dropped = table.filter(hit)
        dropped = dropped.append_column(schema.DROP_REASON, pa.array([REASON] * dropped.num_rows, pa.string()))
        return ShardOutput(table.filter(pc.invert(hit)), dropped, {"mentions": float(dropped.num_rows)})


def settings_of(cfg: PipelineConfig) -> dict[str, Any]:
    return {"word": WORD}


def build_stage(cfg: PipelineConfig, artifacts: dict[str, str]) -> WordFilter:
    return WordFilter(WORD)
