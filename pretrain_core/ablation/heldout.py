"""The held-out set every arm is scored on: documents of one arm's test split that no arm trains on.

Splits are ranks of a seeded hash of each document's id within its domain, and each arm sets its own boundaries
from its own document counts, so a document held out by one arm may be a training document of another (one that
keeps more documents). A candidate is kept only when every arm's boundaries put it outside training. Up to
`docs_per_domain` documents per domain are drawn (seeded) and stored as Parquet with their text, so every arm's
models, whatever their tokenizer, are scored on the same characters.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pretrain_core import storage
from pretrain_core.ablation.spec import AblationSpec
from pretrain_core.pipeline import CorpusPipeline
from pretrain_core.stage import data_shards
from pretrain_core.tokenize.splits import SPLITS, SPLITS_FILE, load_boundaries

HELDOUT_FILE = "heldout.parquet"
HELDOUT_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("domain", pa.string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("text", pa.string(), nullable=False),
    ]
)


def heldout_url(spec: AblationSpec) -> str:
    return storage.join(spec.output_root, HELDOUT_FILE)


def build_heldout(spec: AblationSpec) -> str:
    """Write the shared held-out set (every arm's corpus must be built); returns its URL. Rebuilt from the arms'
    outputs on every call: the same outputs give the same bytes."""
    pipelines = {arm: CorpusPipeline(spec.arm_config(arm)) for arm in spec.arms}
    source = pipelines[spec.heldout_arm]
    boundaries = {arm: load_boundaries(storage.join(p.root("splits"), SPLITS_FILE)) for arm, p in pipelines.items()}
    tables = []
    for url in data_shards(source.root("mixture")):
        table = storage.read_parquet(url, columns=["id", "domain", "source", "text", "repeat_index"])
        table = table.filter(pc.equal(table["repeat_index"], 0)).drop_columns(["repeat_index"])
        ids, domains = table["id"].to_pylist(), table["domain"].to_pylist()
        test_here = boundaries[spec.heldout_arm].split_of(ids, domains) == "test"
        never_trained = np.logical_and.reduce([b.split_of(ids, domains) != SPLITS[0] for b in boundaries.values()])
        tables.append(table.filter(pa.array(test_here & never_trained)))
    pool = pa.concat_tables(tables).cast(HELDOUT_SCHEMA) if tables else HELDOUT_SCHEMA.empty_table()
    pool = pool.take(pc.sort_indices(pool, [("domain", "ascending"), ("id", "ascending")]))
    rng = np.random.default_rng(spec.heldout.seed)
    chosen = []
    domain_of = np.asarray(pool["domain"].to_pylist(), dtype=object)
    for domain in sorted(set(domain_of.tolist())):
        rows = np.flatnonzero(domain_of == domain)
        chosen.append(np.sort(rng.permutation(rows)[: spec.heldout.docs_per_domain]))
    picked = pool.take(pa.array(np.concatenate(chosen) if chosen else np.zeros(0, np.int64)))
    if picked.num_rows == 0:
        raise ValueError(f"arm {spec.heldout_arm!r} has no test document that every arm holds out")
    texts = [text[: spec.heldout.max_chars] for text in picked["text"].to_pylist()]
    picked = picked.set_column(3, "text", pa.array(texts, pa.string()))
    url = heldout_url(spec)
    storage.write_parquet(url, picked)
    return url


def read_heldout(url: str) -> pa.Table:
    return storage.read_parquet(url).cast(HELDOUT_SCHEMA)
