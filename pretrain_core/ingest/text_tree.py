"""Text tree reader: each file of a directory tree is one document (compressed files are decompressed).

The location is the file's path relative to the source base. A file is read only up to `max_doc_bytes`, so a
huge log or dump is quarantined as `too_large` without loading it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import IO

from pretrain_core.ingest.compression import open_decompressed
from pretrain_core.ingest.config import IngestConfig, SourceConfig
from pretrain_core.ingest.records import EMPTY_FILE, TOO_LARGE, RawDoc, decode_utf8, dropped, guarded, read_capped

BINARY_FILE = "binary_file"


def read_text_file(
    url: str, rel: str, source: SourceConfig, cfg: IngestConfig, stats: Counter[str]
) -> Iterator[RawDoc]:
    """The file as one document, or one drop saying why not (empty, binary, invalid UTF-8, too large)."""
    with open_decompressed(url) as stream:
        yield from guarded(rel, _whole_file(stream, rel, cfg, stats))


def _whole_file(stream: IO[bytes], rel: str, cfg: IngestConfig, stats: Counter[str]) -> Iterator[RawDoc]:
    data, too_large = read_capped(stream, cfg.max_doc_bytes)
    if too_large:
        yield dropped(rel, TOO_LARGE, data[: cfg.preview_chars * 4].decode("utf-8", errors="replace"))
    elif not data:
        stats["empty_files"] += 1
        yield dropped(rel, EMPTY_FILE)
    elif b"\x00" in data:
        yield dropped(rel, BINARY_FILE)
    else:
        yield decode_utf8(rel, data)
