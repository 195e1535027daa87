"""Parquet reader: one document per row, read in small record batches so memory follows the batch, not the file.

Locations are `<file>:<row>` (0-based row index over the whole file).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from pretrain_core import storage
from pretrain_core.ingest.config import IngestConfig, SourceConfig
from pretrain_core.ingest.languages import language_of_path
from pretrain_core.ingest.records import EMPTY_FILE, MISSING_TEXT_FIELD, RawDoc, dropped, from_fields

CORRUPT_PARQUET = "corrupt_parquet"
_BATCH_ROWS = 64


def read_parquet(url: str, rel: str, source: SourceConfig, cfg: IngestConfig, stats: Counter[str]) -> Iterator[RawDoc]:
    """Every row of the file as a document or a drop; an unreadable file is one `corrupt_parquet` drop, an unreadable
    row group one per row it holds."""
    fs, path = storage.filesystem(url)
    if fs.size(path) == 0:
        stats["empty_files"] += 1
        yield dropped(rel, EMPTY_FILE)
        return
    with fs.open(path, "rb") as handle:
        try:
            parquet = pq.ParquetFile(handle)
        except (pa.ArrowException, OSError) as error:
            yield dropped(rel, CORRUPT_PARQUET, f"{type(error).__name__}: {error}")
            return
        names = parquet.schema_arrow.names
        if parquet.metadata.num_rows == 0:
            stats["empty_files"] += 1
            yield dropped(rel, EMPTY_FILE)
            return
        if source.text_field not in names:
            for row in range(parquet.metadata.num_rows):
                yield dropped(f"{rel}:{row}", MISSING_TEXT_FIELD)
            return
        path_field = source.path_field if source.domain == "code" and source.path_field in names else None
        wanted = (source.text_field, source.id_field, path_field, source.licence_field)
        columns = list(dict.fromkeys(f for f in wanted if f is not None and f in names))
        first = 0
        for group in range(parquet.num_row_groups):
            # Row group by row group: a damaged page costs the rows of its group not yet read, each dropped as
            # `corrupt_parquet` at its location, and reading goes on with the next group.
            group_rows = parquet.metadata.row_group(group).num_rows
            row = first
            try:
                for batch in parquet.iter_batches(batch_size=_BATCH_ROWS, columns=columns, row_groups=[group]):
                    texts = batch.column(source.text_field).to_pylist()
                    ids = batch.column(source.id_field).to_pylist() if source.id_field in names else [None] * len(texts)
                    languages = (
                        [language_of_path(p, source.code_extensions) for p in batch.column(path_field).to_pylist()]
                        if path_field
                        else [None] * len(texts)
                    )
                    licences = (
                        batch.column(source.licence_field).to_pylist()
                        if source.licence_field in names
                        else [None] * len(texts)
                    )
                    for text, record_id, language, licence in zip(texts, ids, languages, licences, strict=True):
                        needs_id = source.id_field is not None
                        yield from_fields(f"{rel}:{row}", text, record_id, needs_id, language, licence)
                        row += 1
            except (pa.ArrowException, OSError) as error:
                detail = f"row group {group}: {type(error).__name__}: {error}"[: cfg.preview_chars]
                for lost in range(row, first + group_rows):
                    yield dropped(f"{rel}:{lost}", CORRUPT_PARQUET, detail)
            first += group_rows
