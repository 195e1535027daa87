"""Every reader, fed mutated real files (truncation, bit flips, inserted bytes, duplicated and cut stretches,
deep nesting), quarantines what it cannot read and never raises: records found = kept + dropped, every drop has a
reason, and time and memory stay bounded.

Seeds are small real files cut from the demo corpus the package ships: Bible JSONL (plain, gzip, zstd), the same
rows as Parquet with small row groups, the Debian FAQ crawl as WARC (gzip members and plain) and a man page as a
text file. Hypothesis runs derandomized, so CI sees the same cases every time.
"""

from __future__ import annotations

import gzip
import io
import json
import re
import tempfile
import tracemalloc
from importlib import resources
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from warcio.archiveiterator import ArchiveIterator
from warcio.warcwriter import WARCWriter

from pretrain_core.ingest.config import IngestConfig, SourceConfig
from pretrain_core.ingest.stage import ingest_files

DEMO = resources.files("pretrain_core") / "data" / "demo"
PEAK_BYTES = 64 << 20  # seeds are tens of kB: a reader that holds far more than the file has lost its bounds


def _bible_lines(count: int) -> bytes:
    with gzip.open(io.BytesIO((DEMO / "general" / "bible_web_en.jsonl.gz").read_bytes())) as handle:
        return b"".join(handle.readline() for _ in range(count))


def _warc_records(count: int, gzipped: bool) -> bytes:
    """The first ``count`` records of the demo crawl, rewritten (so each gzip member holds one record)."""
    out = io.BytesIO()
    writer = WARCWriter(out, gzip=gzipped)
    source = io.BytesIO((DEMO / "web" / "debian_faq.warc.gz").read_bytes())
    for index, record in enumerate(ArchiveIterator(source)):
        if index == count:
            break
        writer.write_record(record)
    return out.getvalue()


def _seeds() -> dict[str, tuple[str, bytes]]:
    """name → (reader format, file bytes)."""
    lines = _bible_lines(24)
    rows = [json.loads(line)["text"] for line in lines.splitlines()]
    parquet = io.BytesIO()
    pq.write_table(pa.table({"text": rows}), parquet, row_group_size=6)
    manpage = next(iter(sorted((DEMO / "text" / "manpages" / "de" / "man5").iterdir(), key=lambda p: p.name)))
    return {
        "seed.jsonl": ("jsonl", lines),
        "seed.jsonl.gz": ("jsonl", gzip.compress(lines, mtime=0)),
        "seed.jsonl.zst": ("jsonl", zstandard.ZstdCompressor().compress(lines)),
        "seed.parquet": ("parquet", parquet.getvalue()),
        "seed.warc.gz": ("warc", _warc_records(6, gzipped=True)),
        "seed.warc": ("warc", _warc_records(6, gzipped=False)),
        "seed.txt": ("text", manpage.read_bytes()[:20_000]),
    }


SEEDS = _seeds()

# One mutation: (kind, where as a fraction of the file, a length or byte, bytes to insert).
mutation = st.tuples(
    st.sampled_from(["truncate", "flip", "insert", "delete", "duplicate", "nest"]),
    st.floats(min_value=0, max_value=1),
    st.integers(min_value=1, max_value=4096),
    st.binary(max_size=64),
)


def mutate(data: bytes, mutations: list[tuple[str, float, int, bytes]]) -> bytes:
    for kind, where, size, payload in mutations:
        at = int(where * len(data))
        if kind == "truncate":
            data = data[:at]
        elif kind == "flip" and data:
            at = min(at, len(data) - 1)
            data = data[:at] + bytes([data[at] ^ (1 << (size % 8))]) + data[at + 1 :]
        elif kind == "insert":
            data = data[:at] + payload + data[at:]
        elif kind == "delete":
            data = data[:at] + data[at + size :]
        elif kind == "duplicate":  # a stretch repeated: lengths and offsets stop matching
            data = data[:at] + data[at : at + size] + data[at:]
        elif kind == "nest":
            data = data[:at] + b"[" * (size * 16) + data[at:]
    return data


def _ingest(name: str, fmt: str, data: bytes) -> tuple[int, pa.Table, pa.Table]:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / name
        path.write_bytes(data)
        source = SourceConfig(name="fuzz", domain="general", format=fmt, path=directory)  # type: ignore[arg-type]
        output, records, _ = ingest_files([str(path)], source, IngestConfig())
    return records, output.kept, output.dropped


@pytest.mark.parametrize("name", sorted(SEEDS))
def test_the_unmutated_seed_reads_cleanly(name: str) -> None:
    fmt, data = SEEDS[name]
    records, kept, dropped = _ingest(name, fmt, data)
    assert records == kept.num_rows >= 1 and dropped.num_rows == 0


@pytest.mark.parametrize("name", sorted(SEEDS))
@settings(
    max_examples=25,
    deadline=5000,  # ms per example: bounded time, even for a pathological mutation
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(mutations=st.lists(mutation, min_size=1, max_size=4))
def test_a_mutated_file_is_quarantined_never_fatal(name: str, mutations: list[tuple[str, float, int, bytes]]) -> None:
    fmt, seed = SEEDS[name]
    data = mutate(seed, mutations)
    tracemalloc.start()
    try:
        records, kept, dropped = _ingest(name, fmt, data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert records == kept.num_rows + dropped.num_rows
    reasons = dropped.column("drop_reason").to_pylist()
    assert all(isinstance(r, str) and re.fullmatch(r"[a-z0-9_]+", r) for r in reasons), reasons
    assert peak < PEAK_BYTES
