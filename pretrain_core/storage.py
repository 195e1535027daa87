"""fsspec-backed storage: every path in the pipeline is a URL (local path, file://, s3://, memory://).

Readers only ever see complete files, and a crash never leaves a half-written file under its final name: on a
file system a write goes to a temporary sibling name committed by rename; on an object store, where a PUT is atomic
by itself, it is one PUT of what the writer wrote, made only if the writer finished (a rename there is a copy and a
delete: with the temporary name's checks a file cost eight requests, counted in moto's log).
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import posixpath
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import IO, Any

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
from fsspec.core import url_to_fs

_storage_options: dict[str, dict[str, Any]] = {}
# Object stores have buckets, not directories: creating "directories" there would create a missing bucket.
OBJECT_STORES = {"s3", "s3a", "gs", "gcs", "az", "abfs"}


def set_storage_options(protocol: str, **options: Any) -> None:
    """Register default fsspec options for a protocol (e.g. an S3 endpoint), used by every call below."""
    _storage_options[protocol] = options


def protocol_of(url: str) -> str:
    return url.split("://", 1)[0] if "://" in url else "file"


def filesystem(url: str) -> tuple[fsspec.AbstractFileSystem, str]:
    """The filesystem for ``url`` and the path inside it."""
    return url_to_fs(url, **_storage_options.get(protocol_of(url), {}))


class StorageUnavailable(RuntimeError):
    """A storage root that cannot be used; the message is one line naming the URL and what to check."""


def check_root(url: str, create_bucket: bool) -> None:
    """Refuse a root before any work starts: a missing bucket (or, with ``create_bucket``, make it), an object store
    that cannot be reached, missing or refused credentials. Raises StorageUnavailable."""
    try:
        _ensure_bucket(url, create_bucket)
    except StorageUnavailable:
        raise
    except Exception as error:
        message = explain_failure(url, error)
        if message is None:
            raise
        raise StorageUnavailable(message) from error


def _ensure_bucket(url: str, create: bool) -> None:
    if protocol_of(url) not in OBJECT_STORES:
        return
    fs, path = filesystem(url)
    bucket = path.split("/", 1)[0]
    if _bucket_exists(fs, bucket):
        return
    if not create:
        raise StorageUnavailable(
            f"bucket {bucket!r} of {url} does not exist: check storage.root, or set storage.create_bucket=true"
        )
    fs.mkdir(bucket)


def _bucket_exists(fs: fsspec.AbstractFileSystem, bucket: str) -> bool:
    """Whether the bucket exists; unlike `fs.exists`, which answers False for any error, an unreachable endpoint or
    refused credentials raise (S3 asks HEAD on the bucket itself)."""
    if not hasattr(fs, "call_s3"):
        return bool(fs.exists(bucket))
    try:
        fs.call_s3("head_bucket", Bucket=bucket)
    except FileNotFoundError:
        return False
    return True


def explain_failure(url: str, error: BaseException) -> str | None:
    """One line for a storage error a user must fix outside the pipeline (endpoint, credentials), else None."""
    from botocore.exceptions import (
        ClientError,
        ConnectTimeoutError,
        EndpointConnectionError,
        NoCredentialsError,
        PartialCredentialsError,
    )

    endpoint = _storage_options.get(protocol_of(url), {}).get("client_kwargs", {}).get("endpoint_url")
    where = f" at {endpoint}" if endpoint else ""
    cause = error.__cause__ or error.__context__
    for candidate in (error, cause):
        if isinstance(candidate, EndpointConnectionError | ConnectTimeoutError | ConnectionError):
            return (
                f"cannot reach the object store{where} for {url} ({type(candidate).__name__}): check "
                "storage.endpoint_url and that the service is running and reachable from here"
            )
        if isinstance(candidate, NoCredentialsError | PartialCredentialsError):
            return (
                f"no usable credentials for {url}: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE, "
                "or run where an instance role applies"
            )
        if isinstance(candidate, ClientError | PermissionError):
            code = candidate.response.get("Error", {}).get("Code", "") if isinstance(candidate, ClientError) else ""
            return (
                f"access to {url}{where} refused ({code or candidate}): check the credentials and that they may "
                "read and write this bucket"
            )
    return None


def join(base: str, *parts: str) -> str:
    """Join URL parts with '/', keeping the scheme."""
    out = base.rstrip("/")
    for part in parts:
        out = f"{out}/{part.strip('/')}"
    return out


def _split_location(url: str) -> tuple[str, str]:
    """(scheme with its '://' or '' for a local path, the path: absolute for local files, as given elsewhere)."""
    if "://" not in url:
        return "", os.path.abspath(url)
    scheme, path = url.split("://", 1)
    if scheme == "file":
        return "", os.path.abspath(path)
    return f"{scheme}://", "/" + path.lstrip("/")


def relative_to(url: str, base: str) -> str:
    """``url`` as ``./x`` or ``../x`` relative to the folder ``base`` when it lies on the same store within base's
    parent (a stage's own outputs, its sibling stages' and its fits'), else as given: what a record written under
    ``base`` stores, so the build root it belongs to can be moved, copied or synced and still be read."""
    url_scheme, url_path = _split_location(url)
    base_scheme, base_path = _split_location(base)
    if url_scheme != base_scheme or (url_scheme and url_path.split("/")[1:2] != base_path.split("/")[1:2]):
        return url  # another store or bucket
    relative = posixpath.relpath(url_path, base_path)
    if relative.startswith("../.."):
        return url  # outside the build (a source file, another build's index)
    return relative if relative.startswith("..") else f"./{relative}"


def resolved(url: str, base: str) -> str:
    """The inverse of `relative_to`: a ``./`` or ``../`` path read from a record under ``base`` made a URL beside
    base; any other URL (absolute, another store, a record written before records were relative) as it is."""
    if not url.startswith(("./", "../")):
        return url
    scheme = base.split("://", 1)[0] + "://" if "://" in base else ""
    path = base.split("://", 1)[1] if scheme else base
    return scheme + posixpath.normpath(posixpath.join(path, url))


def moved(url: str, old_base: str, new_base: str) -> str:
    """Where ``url`` lies now that what held it at ``old_base`` lies at ``new_base`` (a build root moved, copied
    or synced): the same path relative to the base, on new_base's store. ``url`` itself when the base has not moved
    or when url and old_base are not on one store (nothing relative to carry over)."""
    if _split_location(old_base) == _split_location(new_base) or protocol_of(url) != protocol_of(old_base):
        return url
    relative = posixpath.relpath(_split_location(url)[1], _split_location(old_base)[1])
    scheme, path = new_base.split("://", 1) if "://" in new_base else ("", new_base)
    joined = posixpath.normpath(posixpath.join(path, relative))
    return f"{scheme}://{joined}" if scheme else joined


def exists(url: str) -> bool:
    fs, path = filesystem(url)
    return bool(fs.exists(path))


def size(url: str) -> int:
    """Bytes of the file at ``url``."""
    fs, path = filesystem(url)
    return int(fs.size(path))


def _with_scheme(url: str, path: str) -> str:
    """A path as the filesystem lists it, turned back into a URL with the caller's scheme (local paths stay paths)."""
    if "://" not in url:
        return path
    scheme = url.split("://", 1)[0]
    return f"{scheme}://{path}" if scheme == "file" else f"{scheme}://{path.lstrip('/')}"


def list_files(url: str, suffix: str = "") -> list[str]:
    """All files under ``url`` (recursively) ending with ``suffix``, sorted for deterministic shard order."""
    fs, path = filesystem(url)
    if not fs.exists(path):
        return []
    if fs.isfile(path):
        return [url]
    found = sorted(p for p in fs.find(path) if p.endswith(suffix) and not p.rsplit("/", 1)[-1].startswith(".tmp-"))
    return [_with_scheme(url, p) for p in found]


def names_in(url: str) -> set[str]:
    """The names of the entries directly under ``url`` (none when it does not exist), listed afresh: one listing
    request on an object store where asking for each name is one request each, and never a cached listing, since
    other processes add files (markers of jobs run elsewhere)."""
    fs, path = filesystem(url)
    fs.invalidate_cache(path)
    try:
        entries = fs.ls(path, detail=False)
    except FileNotFoundError:
        return set()
    return {str(entry).rstrip("/").rsplit("/", 1)[-1] for entry in entries}


def list_dirs(url: str) -> list[str]:
    """The directories directly under ``url``, sorted (none when it does not exist)."""
    fs, path = filesystem(url)
    if not fs.isdir(path):
        return []
    found = sorted(entry["name"] for entry in fs.ls(path, detail=True) if entry["type"] == "directory")
    return [_with_scheme(url, p) for p in found]


@contextmanager
def atomic_open(url: str, mode: str = "wb") -> Iterator[IO[Any]]:
    """Open ``url`` for writing; the file appears under its name, whole, only if the block succeeds."""
    fs, path = filesystem(url)
    if protocol_of(url) in OBJECT_STORES:
        if mode != "wb":
            raise ValueError(f"atomic_open: mode {mode!r} on an object store; only 'wb' is supported")
        buffer = io.BytesIO()
        yield buffer
        fs.pipe_file(path, buffer.getvalue())  # one PUT (multipart when large): readers see all of it or nothing
        return
    parent = path.rsplit("/", 1)[0] if "/" in path else ""
    if parent:
        fs.makedirs(parent, exist_ok=True)
    tmp = f"{parent}/.tmp-{uuid.uuid4().hex}-{path.rsplit('/', 1)[-1]}" if parent else f".tmp-{uuid.uuid4().hex}"
    try:
        with fs.open(tmp, mode) as handle:
            yield handle
        fs.mv(tmp, path)
    finally:
        if fs.exists(tmp):
            fs.rm(tmp)


def write_bytes(url: str, data: bytes) -> None:
    with atomic_open(url, "wb") as handle:
        handle.write(data)


def read_bytes(url: str) -> bytes:
    fs, path = filesystem(url)
    with fs.open(path, "rb") as handle:
        return bytes(handle.read())


def write_json(url: str, obj: Any) -> None:
    """Write JSON with sorted keys so equal objects give equal bytes."""
    write_bytes(url, (json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode())


def read_json(url: str) -> Any:
    return json.loads(read_bytes(url))


def write_parquet(url: str, table: pa.Table) -> None:
    """Write a Parquet file atomically; no write statistics that embed time, so reruns are byte-identical."""
    with atomic_open(url, "wb") as handle:
        pq.write_table(table, handle, compression="zstd", write_statistics=True)


def write_parquet_parts(url: str, parts: Sequence[pa.Table]) -> None:
    """Write one Parquet file whose row group i is ``parts[i]`` (empty ones too), atomically, so that a reader
    of part i reads that row group alone (`read_parquet_part`): a shuffle with one file per sender, not one per
    sender and receiver. No dictionary encoding: shuffled columns are mostly hashes and ids, where building a
    dictionary only to abandon it cost seven times the write itself."""
    with (
        atomic_open(url, "wb") as handle,
        pq.ParquetWriter(handle, parts[0].schema, compression="zstd", use_dictionary=False) as writer,
    ):
        for part in parts:
            writer.write_table(part, row_group_size=max(part.num_rows, 1))


def read_parquet_part(url: str, part: int) -> pa.Table:
    """Row group ``part`` of a file `write_parquet_parts` wrote (a ranged read: the other parts are not fetched).
    The footer, which lists every part and is most of a small read's cost (2.3 of 2.5 ms for a file of 963
    parts), is parsed once per file and size in a process: a round's jobs read the same senders' files."""
    return read_parquet_parts(url, range(part, part + 1))[0]


def read_parquet_parts(url: str, parts: range) -> list[pa.Table]:
    """Row groups ``parts`` (consecutive, so stored one after another) of a file `write_parquet_parts` wrote,
    through one open file: object storage serves them from one buffered read instead of one request each."""
    fs, path = filesystem(url)
    size = fs.size(path)
    footer = _parquet_footer(url, size)
    with fs.open(path, "rb", size=size) as handle:  # the size known: no second metadata request on object stores
        parquet = pq.ParquetFile(handle, metadata=footer, pre_buffer=False)
        return [parquet.read_row_group(part, use_threads=False) for part in parts]


@functools.lru_cache(maxsize=64)
def _parquet_footer(url: str, size: int) -> pq.FileMetaData:
    """A Parquet file's metadata, keyed by its size too: shuffle files are written once (atomically) per fit."""
    fs, path = filesystem(url)
    with fs.open(path, "rb") as handle:
        return pq.ParquetFile(handle, pre_buffer=False).metadata


def read_parquet(url: str, columns: list[str] | None = None) -> pa.Table:
    fs, path = filesystem(url)
    with fs.open(path, "rb") as handle:
        # No pre-buffering: its background reads can outlive the call and then need the GIL during interpreter
        # shutdown, which aborts the process ("terminate called without an active exception") after an error.
        return pq.read_table(handle, columns=columns, pre_buffer=False)


def read_artifact(url: str, columns: tuple[str, ...] | None = None) -> pa.Table:
    """A fitted artifact (a plan, clusters, splits) read once per process and file version: every shard job of a
    stage looks it up, and rereading it per shard costs more than the shard's own work on a large corpus. Keyed by
    fsspec's ``ukey``, so a refitted artifact at the same URL is read again."""
    fs, path = filesystem(url)
    return _read_artifact(url, fs.ukey(path), columns)


@functools.lru_cache(maxsize=4)
def _read_artifact(url: str, version: str, columns: tuple[str, ...] | None) -> pa.Table:
    return read_parquet(url, list(columns) if columns else None).combine_chunks()


def read_json_artifact(url: str) -> Any:
    """A fitted JSON artifact (the mixture's plan) read once per process and file version, as `read_artifact` reads
    Parquet ones; shared between callers, so never modified."""
    fs, path = filesystem(url)
    return _read_json_artifact(url, fs.ukey(path))


@functools.lru_cache(maxsize=4)
def _read_json_artifact(url: str, version: str) -> Any:
    return read_json(url)


def sha256(url: str) -> str:
    """Hex digest of a file's bytes, read in chunks; of a directory, of its files' relative names and digests."""
    fs, path = filesystem(url)
    if fs.isdir(path):
        digest = hashlib.sha256()
        for file_url in list_files(url):
            digest.update(f"{file_url[len(url.rstrip('/')) :]}\0{sha256(file_url)}\n".encode())
        return digest.hexdigest()
    digest = hashlib.sha256()
    with fs.open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def remove(url: str) -> None:
    fs, path = filesystem(url)
    if fs.exists(path):
        fs.rm(path, recursive=True)


def local_path(url: str) -> str | None:
    """The local filesystem path of ``url``, or None when it lives elsewhere (tools like torchrun need one)."""
    if "://" not in url:
        return os.path.abspath(url)
    if url.startswith("file://"):
        return url[len("file://") :]
    return None
