from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from pretrain_core import schema, storage
from pretrain_core.stage import (
    LostDocumentsError,
    ShardOutput,
    finalize_stage,
    finished_record,
    finished_stage,
    plan_shards,
    run_shard,
)


class MinLengthStage:
    """A real, tiny per-shard stage: documents shorter than `min_chars` are dropped as `too_short`."""

    name = "clean"
    schema = schema.CLEAN

    def __init__(self, min_chars: int) -> None:
        self.min_chars = min_chars
        self.calls = 0

    def process(self, table: pa.Table) -> ShardOutput:
        self.calls += 1
        rows = table.to_pylist()
        for row in rows:
            row.update(lang="en", lang_score=1.0)
        kept = [r for r in rows if len(r["text"]) >= self.min_chars]
        dropped = [{**r, "drop_reason": "too_short"} for r in rows if len(r["text"]) < self.min_chars]
        return ShardOutput(
            pa.Table.from_pylist(kept, schema=schema.CLEAN),
            pa.Table.from_pylist(dropped, schema=schema.dropped_schema(schema.CLEAN)),
            {"docs_seen": float(len(rows))},
        )


def _ingested_shards(root: Path, texts: list[str], shards: int = 3) -> list[str]:
    urls = []
    for i in range(shards):
        rows = [
            {
                "id": f"{i}-{j}",
                "text": t,
                "source": "licences",
                "domain": "general",
                "licence": "MIT",
                "location": f"{i}:{j}",
                "code_language": None,
            }
            for j, t in enumerate(texts[i::shards])
        ]
        url = str(root / "ingest" / "data" / f"part-{i:05d}.parquet")
        storage.write_parquet(url, pa.Table.from_pylist(rows, schema=schema.INGEST))
        urls.append(url)
    return urls


def _run_all(root: Path, inputs: list[str], stage: MinLengthStage, hash_: str = "h1") -> None:
    jobs = plan_shards("clean", inputs, str(root / "clean"), hash_)
    records = [run_shard(job, stage) for job in jobs]
    finalize_stage("clean", str(root / "clean"), hash_, {"min_chars": stage.min_chars}, records, 0.1)


def _outputs(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted((root / "clean").rglob("*.parquet"))}


def test_counts_add_up_and_drops_are_kept_with_reasons(tmp_path: Path, real_texts: list[str]) -> None:
    inputs = _ingested_shards(tmp_path, [*real_texts, "tiny", "x"])
    _run_all(tmp_path, inputs, MinLengthStage(min_chars=10))
    manifest = finished_stage(str(tmp_path / "clean"), "h1")
    assert manifest is not None
    assert manifest.docs_in == len(real_texts) + 2
    assert manifest.docs_out == len(real_texts)
    assert manifest.dropped == {"too_short": 2}
    assert manifest.stats["docs_seen"] == len(real_texts) + 2
    dropped = pa.concat_tables(
        [storage.read_parquet(u) for u in storage.list_files(str(tmp_path / "clean" / "dropped"), ".parquet")]
    )
    assert sorted(dropped.column("text").to_pylist()) == ["tiny", "x"]


def test_rerun_does_no_work_and_deleted_shard_is_redone_identically(tmp_path: Path, real_texts: list[str]) -> None:
    inputs = _ingested_shards(tmp_path, real_texts)
    _run_all(tmp_path, inputs, MinLengthStage(10))
    before = _outputs(tmp_path)

    again = MinLengthStage(10)
    _run_all(tmp_path, inputs, again)
    assert again.calls == 0
    assert _outputs(tmp_path) == before

    (tmp_path / "clean" / "data" / "part-00001.parquet").unlink()
    redo = MinLengthStage(10)
    _run_all(tmp_path, inputs, redo)
    assert redo.calls == 1
    assert _outputs(tmp_path) == before


def test_changed_config_hash_redoes_every_shard(tmp_path: Path, real_texts: list[str]) -> None:
    inputs = _ingested_shards(tmp_path, real_texts)
    _run_all(tmp_path, inputs, MinLengthStage(10))
    job = plan_shards("clean", inputs, str(tmp_path / "clean"), "h2")[0]
    assert finished_record(job) is None
    assert finished_stage(str(tmp_path / "clean"), "h2") is None


def test_output_that_breaks_the_contract_is_refused(tmp_path: Path, real_texts: list[str]) -> None:
    class Broken(MinLengthStage):
        def process(self, table: pa.Table) -> ShardOutput:
            return ShardOutput(table, pa.Table.from_pylist([], schema=schema.dropped_schema(schema.CLEAN)))

    inputs = _ingested_shards(tmp_path, real_texts, shards=1)
    job = plan_shards("clean", inputs, str(tmp_path / "clean"), "h1")[0]
    with pytest.raises(schema.SchemaError, match="do not match the contract"):
        run_shard(job, Broken(10))
    assert not storage.exists(job.data_url)
    assert not storage.exists(job.record_url)


def test_losing_documents_silently_is_refused(tmp_path: Path, real_texts: list[str]) -> None:
    class Lossy(MinLengthStage):
        def process(self, table: pa.Table) -> ShardOutput:
            out = super().process(table)
            return ShardOutput(out.kept.slice(1), out.dropped)

    inputs = _ingested_shards(tmp_path, real_texts, shards=1)
    job = plan_shards("clean", inputs, str(tmp_path / "clean"), "h1")[0]
    with pytest.raises(LostDocumentsError, match="kept"):
        run_shard(job, Lossy(10))
