"""The demo corpus as the pipeline reads it, for the evaluations that need domain-labelled real documents.

Its sources (pretrain_core/data/demo/sources.yaml) give every document a domain (general, specialist, code). The
pipeline's own ingest stage reads them and the result is brought to the mixture stage's input contract, so later stages
can run on it as they would after quality filtering.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from pretrain_core import schema, storage
from pretrain_core.config import PipelineConfig, load_config
from pretrain_core.pipeline import CorpusPipeline
from pretrain_core.standalone import RawInputs, prepare_inputs


def demo_config(root: str, limit: int | None = None) -> PipelineConfig:
    """The demo config writing under ``root``; with a limit, without the WARC source (its HTML extraction takes
    most of ingest's time)."""
    cfg = load_config()
    update: dict[str, object] = {"storage": cfg.storage.model_copy(update={"root": root})}
    if limit is not None:
        update["sources"] = [s for s in cfg.sources if s.format != "warc"]
    return cfg.model_copy(update=update)


def ingested_shards(cfg: PipelineConfig, output: str, limit: int | None = None) -> list[str]:
    """The corpus after the ingest stage, conformed to the mixture's input contract, one shard per ingest shard;
    with ``limit``, that many documents spread evenly over it (by id)."""
    ingested = CorpusPipeline(cfg).run_stage("ingest")
    data = [url for url in ingested.outputs if "/data/" in url]
    shards = prepare_inputs(cfg, schema.QUALITY, data, output, RawInputs()).shards
    if limit is None:
        return shards
    ids = sorted(i for url in shards for i in storage.read_parquet(url, columns=["id"]).column("id").to_pylist())
    chosen = pa.array([ids[i * len(ids) // limit] for i in range(min(limit, len(ids)))])
    for url in shards:
        table = storage.read_parquet(url)
        storage.write_parquet(url, table.filter(pc.is_in(table.column("id"), value_set=chosen)))
    return shards
