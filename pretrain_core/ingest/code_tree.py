"""Code tree reader: each source file is one document, its language taken from the file name.

Files that would teach a model nothing about writing code are quarantined with their reason: vendored copies of
other projects, generated code and lockfiles, minified bundles, binaries, and files of no known language.
Cheap checks on the path come first, so a whole `node_modules/` costs no reads.
"""

from __future__ import annotations

import fnmatch
from collections import Counter
from collections.abc import Iterator

from pretrain_core import storage
from pretrain_core.ingest.config import IngestConfig, SourceConfig
from pretrain_core.ingest.languages import language_of
from pretrain_core.ingest.records import EMPTY_FILE, TOO_LARGE, RawDoc, dropped, read_capped

BINARY_FILE = "binary_file"
VENDORED = "vendored"
GENERATED = "generated"
MINIFIED = "minified"
UNKNOWN_LANGUAGE = "unknown_language"


def read_code_file(
    url: str, rel: str, source: SourceConfig, cfg: IngestConfig, stats: Counter[str]
) -> Iterator[RawDoc]:
    """The file as one code document with its language, or one drop saying why it is not training material."""
    *dirs, name = rel.split("/")
    if any(part in cfg.code_vendored_dirs for part in dirs):
        yield dropped(rel, VENDORED)
        return
    if any(fnmatch.fnmatchcase(name, pattern) for pattern in cfg.code_generated_files):
        yield dropped(rel, GENERATED)
        return
    language = language_of(name, source.code_extensions)
    if language is None:
        yield dropped(rel, UNKNOWN_LANGUAGE)
        return
    fs, path = storage.filesystem(url)
    with fs.open(path, "rb") as handle:
        data, too_large = read_capped(handle, cfg.max_doc_bytes)
    if too_large:
        yield dropped(rel, TOO_LARGE, data[: cfg.preview_chars * 4].decode("utf-8", errors="replace"))
        return
    if not data:
        stats["empty_files"] += 1
        yield dropped(rel, EMPTY_FILE)
        return
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = ""
    if not text or "\x00" in text:
        yield dropped(rel, BINARY_FILE)
        return
    reason = _unwanted(text, cfg)
    yield dropped(rel, reason, text) if reason else RawDoc(location=rel, text=text, code_language=language)


def _unwanted(text: str, cfg: IngestConfig) -> str | None:
    """`generated` if the header says so, `minified` if its lines are too long, else None."""
    lines = text.splitlines()
    header = "\n".join(lines[: cfg.code_generated_header_lines]).lower()
    if any(marker.lower() in header for marker in cfg.code_generated_markers):
        return GENERATED
    lengths = [len(line) for line in lines] or [0]
    if max(lengths) > cfg.code_max_line_chars or sum(lengths) / len(lengths) > cfg.code_max_mean_line_chars:
        return MINIFIED
    return None
