"""Open an input file as a stream of decompressed bytes, codec from its first bytes (else its suffix), that
reports truncation loudly.

Python's gzip/bz2/lzma readers raise EOFError on a cut-off file; zstandard's stream reader silently stops, so
zstd gets a small reader here that raises the same way. Output is produced in bounded chunks, so a huge
record costs memory only as far as the caller reads it.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import re
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, cast

import zstandard

from pretrain_core import storage

TRUNCATED = "truncated_compressed_file"
CORRUPT = "corrupt_compressed_file"

_ZSTD_INPUT_CHUNK = 8192  # small input steps keep each decompressed piece small, even for highly repetitive text


class _ZstdReader(io.RawIOBase):
    """Raw zstd decompression over a byte stream, across concatenated frames; EOFError if input ends mid-frame."""

    def __init__(self, raw: IO[bytes]) -> None:
        super().__init__()
        self._raw = raw
        self._decompressor = zstandard.ZstdDecompressor().decompressobj()
        self._pending = b""
        self._in_frame = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        while not self._pending:
            chunk = self._raw.read(_ZSTD_INPUT_CHUNK)
            if not chunk:
                if self._in_frame:
                    raise EOFError("zstd stream ended before the end of its last frame")
                return 0
            self._feed(chunk)
        size = min(len(buffer), len(self._pending))
        buffer[:size] = self._pending[:size]
        self._pending = self._pending[size:]
        return size

    def _feed(self, data: bytes) -> None:
        out = []
        while data:
            self._in_frame = True
            out.append(self._decompressor.decompress(data))
            data = b""
            if self._decompressor.eof:
                data = self._decompressor.unused_data
                self._decompressor = zstandard.ZstdDecompressor().decompressobj()
                self._in_frame = False
        self._pending = b"".join(out)


_MAGIC = ((b"\x1f\x8b", "gzip"), (b"\x28\xb5\x2f\xfd", "zstd"), (b"\xfd7zXZ\x00", "xz"))
_BZ2 = re.compile(rb"BZh[1-9]")


def compression_of(url: str, head: bytes = b"") -> str | None:
    """The codec of a file: what its first bytes say (a name can lie: a gzip file called `.jsonl`), else what its
    name says (so a compressed file whose header is damaged is read as compressed and reported corrupt), else
    None for a plain file."""
    for magic, codec in _MAGIC:
        if head.startswith(magic):
            return codec
    if _BZ2.match(head):
        return "bz2"
    name = url.rsplit("/", 1)[-1].lower()
    for suffix, codec in ((".gz", "gzip"), (".zst", "zstd"), (".zstd", "zstd"), (".bz2", "bz2"), (".xz", "xz")):
        if name.endswith(suffix):
            return codec
    return None


@contextmanager
def open_decompressed(url: str) -> Iterator[IO[bytes]]:
    """A binary stream of the file's decompressed bytes; read it in bounded pieces with `read(n)`."""
    fs, path = storage.filesystem(url)
    with fs.open(path, "rb") as raw:
        head = raw.read(6)
        raw.seek(0)
        with _decompressing(raw, compression_of(url, head)) as stream:
            yield stream


def _decompressing(raw: IO[bytes], codec: str | None) -> IO[bytes]:
    if codec == "gzip":
        return cast(IO[bytes], gzip.GzipFile(fileobj=raw, mode="rb"))
    if codec == "zstd":
        return io.BufferedReader(_ZstdReader(raw), buffer_size=1 << 16)
    if codec == "bz2":
        return cast(IO[bytes], bz2.BZ2File(raw, mode="rb"))
    if codec == "xz":
        return cast(IO[bytes], lzma.LZMAFile(raw, mode="rb"))
    return raw


def failure_reason(error: Exception) -> str | None:
    """The drop reason for an error raised while reading a compressed stream, or None if it is something else."""
    if isinstance(error, EOFError):
        return TRUNCATED
    if isinstance(error, gzip.BadGzipFile | zlib.error | zstandard.ZstdError | lzma.LZMAError):
        return CORRUPT
    return None
