from __future__ import annotations

import bz2
import gzip
import lzma
from collections.abc import Callable
from pathlib import Path

import pytest
import zstandard

from pretrain_core.ingest.compression import CORRUPT, TRUNCATED, compression_of, failure_reason, open_decompressed

GPL = (Path(__file__).resolve().parents[2] / "data" / "reference" / "licences" / "GPL-3").read_bytes()


def test_codec_follows_the_bytes_then_the_suffix() -> None:
    assert compression_of("s3://b/x.jsonl.gz") == "gzip"
    assert compression_of("x.JSONL.ZST") == "zstd"
    assert compression_of("x.jsonl") is None
    assert compression_of("x.jsonl", gzip.compress(b"{}")[:6]) == "gzip"  # the name lies: the bytes win
    assert compression_of("x.txt", zstandard.ZstdCompressor().compress(b"{}")[:6]) == "zstd"
    assert compression_of("x.jsonl", b"BZh91A") == "bz2"
    assert compression_of("x.jsonl.gz", b"\x00\x8b\x08\x00\x00\x00") == "gzip"  # damaged magic: still gzip


@pytest.mark.parametrize(
    ("name", "compress"),
    [
        ("gzip-named.jsonl", gzip.compress),
        ("zstd-named.txt", lambda b: zstandard.ZstdCompressor().compress(b)),
        ("bz2-named.jsonl", bz2.compress),
        ("xz-named.jsonl", lzma.compress),
    ],
)
def test_a_compressed_file_under_a_plain_name_reads_decompressed(
    tmp_path: Path, name: str, compress: Callable[[bytes], bytes]
) -> None:
    (tmp_path / name).write_bytes(compress(GPL))
    with open_decompressed(str(tmp_path / name)) as stream:
        assert stream.read() == GPL


@pytest.mark.parametrize(
    ("name", "compress"),
    [
        ("gpl.txt", lambda b: b),
        ("gpl.txt.gz", gzip.compress),
        ("gpl.txt.zst", lambda b: zstandard.ZstdCompressor().compress(b)),
    ],
)
def test_reads_back_the_original_bytes(tmp_path: Path, name: str, compress: Callable[[bytes], bytes]) -> None:
    (tmp_path / name).write_bytes(compress(GPL))
    with open_decompressed(str(tmp_path / name)) as stream:
        assert stream.read() == GPL


def test_concatenated_zstd_frames_read_as_one_stream(tmp_path: Path) -> None:
    compressor = zstandard.ZstdCompressor()
    half = len(GPL) // 2
    (tmp_path / "two.zst").write_bytes(compressor.compress(GPL[:half]) + compressor.compress(GPL[half:]))
    with open_decompressed(str(tmp_path / "two.zst")) as stream:
        assert stream.read() == GPL


@pytest.mark.parametrize(
    ("name", "compress"),
    [("cut.gz", gzip.compress), ("cut.zst", lambda b: zstandard.ZstdCompressor().compress(b))],
)
def test_truncated_stream_raises_eof_classified_as_truncated(
    tmp_path: Path, name: str, compress: Callable[[bytes], bytes]
) -> None:
    data = compress(GPL * 4)
    (tmp_path / name).write_bytes(data[: len(data) * 2 // 3])
    with open_decompressed(str(tmp_path / name)) as stream, pytest.raises(EOFError) as caught:
        while stream.read(4096):
            pass
    assert failure_reason(caught.value) == TRUNCATED


def test_garbage_gzip_is_classified_as_corrupt(tmp_path: Path) -> None:
    (tmp_path / "bad.gz").write_bytes(b"this is not gzip at all")
    with open_decompressed(str(tmp_path / "bad.gz")) as stream, pytest.raises(Exception) as caught:
        stream.read()
    assert failure_reason(caught.value) == CORRUPT
    assert failure_reason(ValueError("other")) is None
