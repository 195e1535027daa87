"""The Arrow schemas between stages: the contract at the centre of the pipeline (documented in docs/schema.md).

Each stage's output schema is the previous one plus the columns that stage adds, so any stage can read the
output of any earlier stage. Dropped documents keep the schema of the stage that dropped them plus
``drop_reason``. ``validate`` is called on every write; a mismatch is a bug, never coerced away.
"""

from __future__ import annotations

from typing import Literal, get_args

import pyarrow as pa

from pretrain_core.signal_names import SIGNAL_FIELDS

Domain = Literal["general", "specialist", "code"]  # the one list of domains
DOMAINS: tuple[Domain, ...] = get_args(Domain)

# Written by ingestion. `id` is stable: a hash of source name and the record's location in its input.
INGEST_FIELDS = [
    pa.field("id", pa.string(), nullable=False),
    pa.field("text", pa.string(), nullable=False),
    pa.field("source", pa.string(), nullable=False),
    pa.field("domain", pa.string(), nullable=False),
    pa.field("licence", pa.string(), nullable=False),  # SPDX expression (normalised), NOASSERTION when none stated
    pa.field("location", pa.string(), nullable=False),  # file path / URL and offset the record came from
    pa.field("code_language", pa.string(), nullable=True),  # set for code documents (from the file extension)
]
CLEAN_FIELDS = [
    pa.field("lang", pa.string(), nullable=False),  # ISO 639-1 code, "code" for code documents, or "und"
    pa.field("lang_score", pa.float32(), nullable=False),
]
DEDUP_FIELDS = [
    pa.field("dup_cluster", pa.string(), nullable=False),  # id of the cluster's representative (itself if unique)
    pa.field("dup_cluster_size", pa.int32(), nullable=False),
]
PII_FIELDS = [
    pa.field("pii_count", pa.int32(), nullable=False),
    pa.field("pii_types", pa.list_(pa.string()), nullable=False),
]
# Each quality signal (pretrain_core/quality/signals.py) as a float; null where the document's group has none.
QUALITY_SIGNALS_TYPE = pa.struct([pa.field(name, pa.float32(), nullable=True) for name in SIGNAL_FIELDS])
QUALITY_FIELDS = [
    pa.field("perplexity", pa.float32(), nullable=False),
    pa.field("quality_signals", QUALITY_SIGNALS_TYPE, nullable=True),  # null: not scored (a stage run alone)
    pa.field("quality_classifier", pa.float32(), nullable=False),  # the shipped classifier's P(curated)
    pa.field("quality_score", pa.float32(), nullable=False),  # the combined score (pretrain_core/quality/score.py)
    pa.field("quality_bucket", pa.string(), nullable=False),  # head / middle / tail by quality_score
]
# The document's ids under the pipeline's tokenizer, as the mixture's token count encoded them, on its first copy
# (null on further copies, which share them, and where unknown): tokenization checks them and encodes only the rest.
TOKEN_IDS = pa.field("token_ids", pa.list_(pa.int32()), nullable=True)
MIXTURE_FIELDS = [
    pa.field("n_tokens", pa.int32(), nullable=False),
    pa.field("repeat_index", pa.int32(), nullable=False),  # 0 for the first copy, >0 for upsampled copies
    TOKEN_IDS,
]

INGEST = pa.schema(INGEST_FIELDS)
CLEAN = pa.schema(INGEST_FIELDS + CLEAN_FIELDS)
DEDUP = pa.schema(INGEST_FIELDS + CLEAN_FIELDS + DEDUP_FIELDS)
PII = pa.schema(INGEST_FIELDS + CLEAN_FIELDS + DEDUP_FIELDS + PII_FIELDS)
QUALITY = pa.schema(INGEST_FIELDS + CLEAN_FIELDS + DEDUP_FIELDS + PII_FIELDS + QUALITY_FIELDS)
MIXTURE = pa.schema(INGEST_FIELDS + CLEAN_FIELDS + DEDUP_FIELDS + PII_FIELDS + QUALITY_FIELDS + MIXTURE_FIELDS)

DROP_REASON = pa.field("drop_reason", pa.string(), nullable=False)

# Written by tokenization: fixed-length packed sequences, the training input.
TOKENS = pa.schema(
    [
        pa.field("input_ids", pa.list_(pa.int32()), nullable=False),  # seq_len + 1 ids: inputs plus shifted target
        pa.field("domain", pa.string(), nullable=False),  # domain of the majority of the sequence's tokens
        pa.field("source", pa.string(), nullable=False),  # source of the document with most of its tokens
        pa.field("licences", pa.list_(pa.string()), nullable=False),  # every licence of its documents, sorted
        pa.field("doc_ids", pa.list_(pa.string()), nullable=False),  # documents packed into this sequence
        pa.field("split", pa.string(), nullable=False),  # train / validation / test, decided per document
        pa.field("quality_bucket", pa.string(), nullable=False),  # of the document with most of its tokens
        pa.field("quality_score", pa.float32(), nullable=False),  # of that document: what a curriculum orders by
    ]
)
# Token shards written before sequences carried their quality read with these values (`with_quality_columns`).
UNSCORED_BUCKET, UNSCORED_SCORE = "unscored", float("nan")


def with_quality_columns(table: pa.Table) -> pa.Table:
    """Token shards written before the quality columns, with them added as unscored: old builds stay readable."""
    for name, value, type_ in (
        ("quality_bucket", UNSCORED_BUCKET, pa.string()),
        ("quality_score", UNSCORED_SCORE, pa.float32()),
    ):
        if name not in table.schema.names:
            table = table.append_column(name, pa.array([value] * table.num_rows, type_))
    return table


class SchemaError(ValueError):
    """A table does not match the stage contract."""


def dropped_schema(schema: pa.Schema) -> pa.Schema:
    return schema.append(DROP_REASON)


def validate(table: pa.Table, schema: pa.Schema, where: str) -> pa.Table:
    """Check ``table`` against ``schema`` (names, order, types, nulls) and return it cast to the exact schema."""
    if table.schema.names != schema.names:
        raise SchemaError(f"{where}: columns {table.schema.names} do not match the contract {schema.names}")
    for field in schema:
        column = table.column(field.name)
        if column.type != field.type:
            raise SchemaError(f"{where}: column {field.name!r} has type {column.type}, contract says {field.type}")
        if not field.nullable and column.null_count:
            raise SchemaError(f"{where}: column {field.name!r} has {column.null_count} nulls, contract forbids them")
    return table.cast(schema)


def empty(schema: pa.Schema) -> pa.Table:
    return schema.empty_table()
