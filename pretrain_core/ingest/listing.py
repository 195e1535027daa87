"""The files of a source, listed deterministically, each with its path relative to the source's base.

The base is the directory a source's path names (or the part before its first wildcard, or a single file's
folder). Locations and ids are built from paths relative to it, so moving or re-mounting the corpus root, or
copying it to S3, keeps every document id.
"""

from __future__ import annotations

import functools
import hashlib
import os
from dataclasses import dataclass
from typing import Any

from pretrain_core import storage
from pretrain_core.ingest.config import SourceConfig

_WILDCARDS = ("*", "?", "[")


@dataclass(frozen=True)
class SourceFile:
    """A file to ingest: where it is, its path relative to the source base (which ids derive from), its size."""

    url: str
    rel: str  # path relative to the source base, '/'-separated
    size: int


def is_glob(path: str) -> bool:
    return any(char in path for char in _WILDCARDS)


def source_base(source: SourceConfig) -> str:
    """The filesystem path that locations are relative to."""
    fs, path = storage.filesystem(source.path)
    if is_glob(path):
        parts = path.split("/")
        first = next(i for i, part in enumerate(parts) if is_glob(part))
        return "/".join(parts[:first])
    if fs.isdir(path):
        return path.rstrip("/")
    return path.rsplit("/", 1)[0] if "/" in path else ""


def relative_path(base: str, url: str) -> str:
    """`url`'s path relative to a source base (from `source_base`); an error if the file does not lie under it."""
    _, path = storage.filesystem(url)
    if base and not path.startswith(base + "/"):
        raise ValueError(f"{url} is not under the source base {base!r}")
    return path[len(base) :].lstrip("/")


def missing_local_sources(sources: list[SourceConfig]) -> list[str]:
    """ "name: path" of each source whose local path (not a glob, not a remote URL) does not exist: checked before a
    run starts, so a typo is one line and not a failed flow a minute later. Remote and glob paths are left to the
    ingest stage, which lists them."""
    return [
        f"{source.name}: {source.path}"
        for source in sources
        if "://" not in source.path and not is_glob(source.path) and not os.path.exists(source.path)
    ]


def list_source_files(source: SourceConfig) -> list[SourceFile]:
    """Every file the source's path names, sorted by relative path; hidden paths only when the source asks."""
    fs, path = storage.filesystem(source.path)
    found: dict[str, dict[str, Any]] = {}
    if is_glob(path):
        for match, info in sorted(fs.glob(path, detail=True).items()):
            found.update(fs.find(match, detail=True) if info["type"] == "directory" else {match: info})
    elif fs.isdir(path):
        found = fs.find(path, detail=True)
    elif fs.isfile(path):
        found = {path: fs.info(path)}
    else:
        raise FileNotFoundError(f"source {source.name!r}: nothing at {source.path}")
    base = source_base(source)
    files = []
    for file_path, info in found.items():
        rel = file_path[len(base) :].lstrip("/")
        if info.get("type", "file") != "file" or (not source.include_hidden and _hidden(rel)):
            continue
        url = fs.unstrip_protocol(file_path) if "://" in source.path else file_path
        files.append(SourceFile(url=url, rel=rel, size=int(info.get("size") or 0)))
    if not files:
        raise FileNotFoundError(f"source {source.name!r}: {source.path} holds no files")
    return sorted(files, key=lambda f: f.rel)


def sources_bytes(sources: list[SourceConfig]) -> int:
    """The bytes of every file the sources name, as stored (what sizes a run's worker pool)."""
    return sum(file.size for source in sources for file in list_source_files(source))


def _hidden(rel: str) -> bool:
    return any(part.startswith(".") for part in rel.split("/"))


SAMPLED_BYTES = 4096  # read from each end of a file for its identity


def source_identity(source: SourceConfig) -> str:
    """A digest of what the source holds: each file's path relative to the source base, its size, and the sha256
    of its first and last 4 KiB. What ingest's outputs depend on instead of where the files lie, so a build keeps
    its stage hashes when the corpus or the checkout moves, is re-mounted or copied to S3; an edit that keeps a
    file's size and both ends is the one change it misses (a rebuild after one: delete ingest's manifest)."""
    return _identity(source.model_dump_json())


@functools.lru_cache(maxsize=256)
def _identity(source_json: str) -> str:
    source = SourceConfig.model_validate_json(source_json)
    digest = hashlib.sha256()
    for file in list_source_files(source):
        fs, path = storage.filesystem(file.url)
        with fs.open(path, "rb") as handle:
            head = handle.read(SAMPLED_BYTES)
            handle.seek(max(file.size - SAMPLED_BYTES, len(head)))
            tail = handle.read(SAMPLED_BYTES)
        digest.update(f"{file.rel}\0{file.size}\0".encode() + hashlib.sha256(head + tail).digest())
    return digest.hexdigest()
