from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
import s3fs

from pretrain_core import storage
from tests.fault_proxy import FaultProxy


def _table() -> pa.Table:
    return pa.table({"id": ["a", "b"], "text": ["first document", "второй документ 第二"]})


@pytest.mark.parametrize("scheme", ["local", "memory"])
def test_parquet_round_trip_and_listing(tmp_path: Path, scheme: str) -> None:
    root = str(tmp_path) if scheme == "local" else "memory://storage-test"
    url = storage.join(root, "stage", "data", "part-0.parquet")
    storage.write_parquet(url, _table())
    assert storage.read_parquet(url).equals(_table())
    assert storage.list_files(storage.join(root, "stage"), ".parquet") == [
        url if scheme == "memory" else str(Path(url).resolve())
    ]


def test_atomic_open_leaves_nothing_when_the_write_fails(tmp_path: Path) -> None:
    url = str(tmp_path / "out" / "file.bin")
    with pytest.raises(RuntimeError), storage.atomic_open(url) as handle:
        handle.write(b"partial")
        raise RuntimeError("crash mid-write")
    assert not storage.exists(url)
    assert list((tmp_path / "out").iterdir()) == []


def test_parquet_writes_are_byte_identical(tmp_path: Path) -> None:
    storage.write_parquet(str(tmp_path / "a.parquet"), _table())
    storage.write_parquet(str(tmp_path / "b.parquet"), _table())
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()


def test_s3_round_trip_against_a_real_s3_api(s3_endpoint: str) -> None:
    storage.set_storage_options("s3", client_kwargs={"endpoint_url": s3_endpoint})
    try:
        url = "s3://pretrain-test/run/corpus/clean/data/part-00000.parquet"
        storage.write_parquet(url, _table())
        storage.write_json("s3://pretrain-test/run/corpus/clean/manifest.json", {"docs_out": 2})
        assert storage.read_parquet(url).equals(_table())
        assert storage.read_json("s3://pretrain-test/run/corpus/clean/manifest.json") == {"docs_out": 2}
        assert storage.list_files("s3://pretrain-test/run/corpus/clean/data", ".parquet") == [url]
        # The object is really in the bucket, seen through an independent client.
        fs = s3fs.S3FileSystem(client_kwargs={"endpoint_url": s3_endpoint}, skip_instance_cache=True)
        assert fs.exists("pretrain-test/run/corpus/clean/data/part-00000.parquet")
        assert not [p for p in fs.find("pretrain-test/run") if ".tmp-" in p]
    finally:
        storage.set_storage_options("s3")


def test_an_s3_write_is_one_request_and_a_failed_one_makes_none(s3_endpoint: str) -> None:
    """On an object store a PUT is atomic by itself: a write is that one request (no temporary name to copy and
    delete), and a write whose block fails sends nothing, so nothing appears under its name."""
    with FaultProxy(s3_endpoint, every=10**9) as proxy:  # no faults: it counts what reaches the store
        storage.set_storage_options("s3", client_kwargs={"endpoint_url": proxy.url})
        try:
            storage.write_json("s3://pretrain-test/one-put/warm.json", {})  # the client's own first requests
            before = proxy.forwarded
            storage.write_json("s3://pretrain-test/one-put/done.json", {"docs": 2})
            assert proxy.forwarded - before == 1
            with pytest.raises(RuntimeError), storage.atomic_open("s3://pretrain-test/one-put/failed.json") as handle:
                handle.write(b'{"docs": ')
                raise RuntimeError("the writer stopped half-way")
            assert proxy.forwarded - before == 1
            assert not storage.exists("s3://pretrain-test/one-put/failed.json")
            assert storage.read_json("s3://pretrain-test/one-put/done.json") == {"docs": 2}
        finally:
            storage.set_storage_options("s3")


def test_names_in_lists_afresh_what_another_client_wrote(s3_endpoint: str, tmp_path: Path) -> None:
    """Job markers are written by other processes: a listing made before they were must not hide them later."""
    storage.set_storage_options("s3", client_kwargs={"endpoint_url": s3_endpoint})
    try:
        for url in ("s3://pretrain-test/markers/texts", str(tmp_path / "markers" / "texts")):
            assert storage.names_in(url) == set()
            storage.write_json(f"{url}/00000.json", {})
            assert storage.names_in(url) == {"00000.json"}
            if url.startswith("s3://"):
                other = s3fs.S3FileSystem(client_kwargs={"endpoint_url": s3_endpoint}, skip_instance_cache=True)
                other.pipe_file("pretrain-test/markers/texts/00001.json", b"{}")
            else:
                Path(url, "00001.json").write_text("{}", encoding="utf-8")
            assert storage.names_in(url) == {"00000.json", "00001.json"}, url
    finally:
        storage.set_storage_options("s3")


def test_an_artifact_is_read_once_per_process_until_it_is_rewritten(tmp_path: Path) -> None:
    url = str(tmp_path / "plan.parquet")
    storage.write_parquet(url, pa.table({"id": ["a", "b"], "repeats": [1, 2]}))
    first = storage.read_artifact(url, ("id",))
    assert storage.read_artifact(url, ("id",)) is first and first.column_names == ["id"]
    storage.write_parquet(url, pa.table({"id": ["a", "b", "c"], "repeats": [1, 2, 0]}))  # refitted
    assert storage.read_artifact(url, ("id",)).num_rows == 3


def test_a_json_artifact_is_read_once_per_process_until_it_is_rewritten(tmp_path: Path) -> None:
    url = str(tmp_path / "plan.json")
    storage.write_json(url, {"counts": {"a": 1}})
    first = storage.read_json_artifact(url)
    assert storage.read_json_artifact(url) is first and first == {"counts": {"a": 1}}
    storage.write_json(url, {"counts": {"a": 1, "b": 2}})  # refitted
    assert storage.read_json_artifact(url) == {"counts": {"a": 1, "b": 2}}


@pytest.mark.parametrize("scheme", ["file", "s3"])
def test_parts_file_reads_each_part_alone(tmp_path: Path, scheme: str, request: pytest.FixtureRequest) -> None:
    """A shuffle file: row group i is part i, empty parts included, each read back by itself (on S3 too)."""
    parts = [_table().slice(0, 0), _table(), _table().slice(1, 1), _table().slice(0, 0)]
    if scheme == "s3":
        storage.set_storage_options("s3", client_kwargs={"endpoint_url": request.getfixturevalue("s3_endpoint")})
        url = "s3://pretrain-test/shuffle/bands/00003.parquet"
    else:
        url = str(tmp_path / "bands" / "00003.parquet")
    try:
        storage.write_parquet_parts(url, parts)
        for index, part in enumerate(parts):
            assert storage.read_parquet_part(url, index).equals(part), index
        with pytest.raises(Exception, match="num_row_groups"):
            storage.read_parquet_part(url, len(parts))
        rewritten = [_table(), _table().slice(0, 0)]  # a file written again is read again (its footer too)
        storage.write_parquet_parts(url, rewritten)
        assert [storage.read_parquet_part(url, i).num_rows for i in range(2)] == [rewritten[0].num_rows, 0]
    finally:
        storage.set_storage_options("s3")


@pytest.mark.parametrize(
    ("base", "url", "relative"),
    [
        ("runs/a/corpus/clean", "runs/a/corpus/clean/data/x.parquet", "./data/x.parquet"),
        ("runs/a/corpus/clean", "runs/a/corpus/ingest/data/x.parquet", "../ingest/data/x.parquet"),
        ("s3://bucket/a/corpus/clean", "s3://bucket/a/corpus/ingest/data/x", "../ingest/data/x"),
        ("runs/a/corpus/ingest", "/srv/sources/x.jsonl.gz", "/srv/sources/x.jsonl.gz"),  # outside the build
        ("s3://bucket/a/corpus/clean", "s3://other/a/corpus/ingest/x", "s3://other/a/corpus/ingest/x"),
        ("s3://bucket/a/corpus/clean", "/tmp/x", "/tmp/x"),
    ],
)
def test_records_hold_urls_within_the_build_relative_to_where_they_lie(base: str, url: str, relative: str) -> None:
    assert storage.relative_to(url, base) == relative
    moved = base.replace("a/corpus", "b/copied/corpus")
    expected = url.replace("a/corpus", "b/copied/corpus") if relative.startswith(".") else url
    assert storage.resolved(relative, moved) == expected


def test_a_url_recorded_beside_a_run_follows_the_run_when_it_moves() -> None:
    then, now = "outputs/demo/train/corpus-1", "s3://bucket/copy/train/corpus-1"
    assert storage.moved("outputs/demo/corpus/tokenize", then, now) == "s3://bucket/copy/corpus/tokenize"
    assert storage.moved("outputs/demo/corpus/tokenize", then, then) == "outputs/demo/corpus/tokenize"
