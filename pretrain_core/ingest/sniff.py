"""A record file's format from its first (decompressed) bytes, since names lie: Parquet, WARC/WET or JSONL.

Only a positive sign counts: `PAR1`, a `WARC/` line, a JSON object. A file that shows none (damaged, or garbage
before its first record) keeps the format its source declares, whose reader then quarantines what it cannot read.
"""

from __future__ import annotations

import lzma
import zlib

import zstandard

from pretrain_core.ingest.compression import open_decompressed

RECORD_FORMATS = frozenset({"jsonl", "parquet", "warc", "wet"})  # the formats a file's bytes can tell apart
_HEAD_BYTES = 4096


def content_format(url: str) -> str | None:
    """jsonl, parquet, warc or wet when the first bytes say so; None when they say nothing certain."""
    try:
        with open_decompressed(url) as stream:  # compressed under any name: the codec comes from the bytes too
            head = stream.read(_HEAD_BYTES)
    except (EOFError, OSError, zlib.error, zstandard.ZstdError, lzma.LZMAError):
        return None
    if head.startswith(b"PAR1"):
        return "parquet"
    if head.startswith(b"WARC/"):
        wet = b"WARC-Type: conversion" in head or url.lower().removesuffix(".gz").endswith(".wet")
        return "wet" if wet else "warc"
    if head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{"):
        return "jsonl"
    return None
