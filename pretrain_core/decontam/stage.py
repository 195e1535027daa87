"""The decontaminate stage: training documents sharing an n-gram with an evaluation set are dropped or redacted.

The index holds the n-grams of the configured evaluation files and, unless `heldout` is off, of the corpus's own
validation and test documents (which the zero-shot tasks are built from); the splits fit decides those, so the
stage runs after quality, where the splits are fitted, and before the mixture copies anything. Held-out documents
pass untouched: only the training split is checked. Each drop is charged to the set with the most overlapping
n-grams; per-set counts go to the stage's stats, so the manifest and the data card show them.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pretrain_core import schema as contract
from pretrain_core import storage
from pretrain_core.decontam.config import HELDOUT_SET, DecontamConfig
from pretrain_core.decontam.eval_sets import item_batches
from pretrain_core.decontam.index import IndexWriter, NgramIndex
from pretrain_core.decontam.ngrams import ngram_hashes, normalised
from pretrain_core.decontam.scan import find_overlaps, redacted
from pretrain_core.dedup.config import DedupConfig
from pretrain_core.stage import ShardOutput
from pretrain_core.tokenize.splits import SPLITS, SplitBoundaries, load_boundaries

if TYPE_CHECKING:
    from pretrain_core.config import PipelineConfig

DROP_PREFIX = "contaminated:"
HELDOUT_FILE = "heldout.parquet"
_HELDOUT_SCHEMA = pa.schema([pa.field("hash", pa.uint64(), nullable=False)])


class DecontamStage:
    """Per-shard check of the training documents against the index; picklable (the index loads where it runs)."""

    name = "decontaminate"
    schema = contract.QUALITY

    def __init__(self, cfg: DecontamConfig, dedup: DedupConfig, index: NgramIndex | None, splits: SplitBoundaries):
        self.cfg, self.dedup, self.index, self.splits = cfg, dedup, index, splits

    def process(self, table: pa.Table) -> ShardOutput:
        empty = table.schema.empty_table().append_column(contract.DROP_REASON, pa.array([], pa.string()))
        if self.index is None:
            return ShardOutput(table, empty, {"decontam_checked_docs": 0.0})
        split = self.splits.split_of(table.column("id").to_pylist(), table.column("domain").to_pylist())
        train_rows = np.flatnonzero(split == SPLITS[0])
        texts = table.column("text").combine_chunks()
        stats: Counter[str] = Counter({"decontam_checked_docs": len(train_rows)})
        overlaps = find_overlaps(texts.take(pa.array(train_rows)), self.index, self.cfg, self.dedup, stats)
        out_texts = texts.to_pylist() if self.cfg.action == "redact" and overlaps else None
        reasons: list[str | None] = [None] * table.num_rows
        for train_row, overlap in overlaps.items():
            row = int(train_rows[train_row])
            for name, count in overlap.set_counts.items():
                stats[f"contaminated_docs/{name}"] += 1
                stats[f"contaminated_ngrams/{name}"] += count
            if out_texts is not None:
                left = redacted(out_texts[row], overlap, self.cfg, self.dedup.ignore)
                if left is not None:
                    stats[f"redacted_docs/{overlap.main_set}"] += 1
                    stats["redacted_chars"] += len(out_texts[row]) - len(left)
                    out_texts[row] = left
                    continue
            reasons[row] = DROP_PREFIX + overlap.main_set
        if out_texts is not None:
            table = table.set_column(table.schema.get_field_index("text"), "text", pa.array(out_texts, pa.string()))
        keep = pa.array([reason is None for reason in reasons], pa.bool_())
        dropped = table.filter(pc.invert(keep))
        dropped = dropped.append_column(contract.DROP_REASON, pa.array([r for r in reasons if r], pa.string()))
        return ShardOutput(table.filter(keep), dropped, {k: float(v) for k, v in sorted(stats.items())})


def settings_of(cfg: PipelineConfig) -> dict[str, Any]:
    """The stage's settings, the normalisation it shares with dedup, and each evaluation file's content hash (an
    edited benchmark file redoes the stage)."""
    files = {s.name: storage.sha256(s.path) for s in cfg.decontaminate.eval_sets if storage.exists(s.path)}
    return {"decontaminate": cfg.decontaminate, "normalise": cfg.dedup.ignore, "eval_files_sha256": files}


def fit_map(input_url: str, cfg: PipelineConfig, shared: dict[str, str], partial_url: str) -> None:
    """One shard's held-out n-grams (validation and test documents), unique, as a Parquet column of hashes."""
    hashes = np.empty(0, dtype=np.uint64)
    if cfg.decontaminate.enabled and cfg.decontaminate.heldout:
        table = storage.read_parquet(input_url, columns=["id", "domain", "text"])
        split = load_boundaries(shared["splits"]).split_of(
            table.column("id").to_pylist(), table.column("domain").to_pylist()
        )
        rows = pa.array(np.flatnonzero(split != SPLITS[0]))
        texts = table.column("text").combine_chunks().take(rows)
        hashes = np.unique(
            ngram_hashes(
                normalised(texts, cfg.dedup.ignore), cfg.decontaminate.ngram, cfg.decontaminate.unspaced_chars_per_word
            ).hashes
        )
    storage.write_parquet(
        storage.join(partial_url, HELDOUT_FILE), pa.table([pa.array(hashes, pa.uint64())], schema=_HELDOUT_SCHEMA)
    )


def fit_stage(partials: list[str], cfg: PipelineConfig, shared: dict[str, str], artifact_dir: str) -> dict[str, str]:
    """The index of every evaluation set's n-grams and the shards' held-out ones; `index.json` says how many each
    set gave and how many items were shorter than one n-gram (those can only be found by a longer overlap)."""
    dc = cfg.decontaminate
    if not dc.enabled:
        return {}
    sets = ([HELDOUT_SET] if dc.heldout else []) + [s.name for s in dc.eval_sets]
    writer = IndexWriter(sets)
    items: dict[str, dict[str, int]] = {}
    for eval_set in dc.eval_sets:
        counted = items.setdefault(eval_set.name, {"items": 0, "short_items": 0})
        for batch in item_batches(eval_set):
            grams = ngram_hashes(
                normalised(pa.array(batch, pa.string()), cfg.dedup.ignore), dc.ngram, dc.unspaced_chars_per_word
            )
            counted["items"] += len(batch)
            counted["short_items"] += int(np.count_nonzero(np.diff(grams.offsets) == 0))
            writer.add(eval_set.name, np.unique(grams.hashes))
    if dc.heldout:
        for partial in partials:
            column = storage.read_parquet(storage.join(partial, HELDOUT_FILE)).column("hash")
            writer.add(HELDOUT_SET, column.to_numpy())
    index_dir = storage.join(artifact_dir, "index")
    writer.finish(index_dir, dc.false_positive_rate, dc.max_filter_bytes, {"items": items})
    return {"decontam_index": index_dir}


def build_stage(cfg: PipelineConfig, artifacts: dict[str, str]) -> DecontamStage:
    index = NgramIndex.open(artifacts["decontam_index"]) if cfg.decontaminate.enabled else None
    return DecontamStage(cfg.decontaminate, cfg.dedup, index, load_boundaries(artifacts["splits"]))
