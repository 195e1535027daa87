"""Apply the mixture plan to one shard: each document is emitted ``repeats`` times, unsampled ones are dropped.
The first copy carries the token ids the plan's count encoded (`token_ids`), which tokenization reuses."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pretrain_core.card.stats import TOKENS_BY_LICENCE
from pretrain_core.mixture.config import MixtureConfig
from pretrain_core.mixture.plan import count_shard_tokens, plan_mixture, plan_rows, token_ids_of
from pretrain_core.schema import MIXTURE, TOKEN_IDS, dropped_schema
from pretrain_core.stage import ShardOutput

if TYPE_CHECKING:
    from pretrain_core.config import PipelineConfig

NOT_SAMPLED = "mixture_not_sampled"


class MixtureStage:
    """Per-shard stage built from the plan written by ``plan_mixture``; picklable. A shard job binds it to its
    input shards (`for_inputs`), so it reads only their token counts; unbound, it reads every shard's.

    Copies are ordered by repeat index (all first copies in input order, then all second copies, ...), so two
    copies of a document are never neighbours in the output.
    """

    name = "mixture"
    schema = MIXTURE

    def __init__(self, cfg: MixtureConfig, artifacts: dict[str, str], inputs: Sequence[str] | None = None) -> None:
        self.cfg = cfg
        self.artifacts = {"mixture_plan": artifacts["mixture_plan"]}
        self.inputs = None if inputs is None else tuple(inputs)

    def for_inputs(self, inputs: Sequence[str]) -> MixtureStage:
        return MixtureStage(self.cfg, self.artifacts, inputs)

    def process(self, table: pa.Table) -> ShardOutput:
        plan = plan_rows(self.artifacts, self.inputs)
        rows = pc.index_in(table.column("id"), value_set=plan.column("id"))
        if rows.null_count:
            missing = table.column("id").filter(pc.is_null(rows)).to_pylist()[:3]
            raise ValueError(f"mixture: {rows.null_count} document(s) are not in the plan (e.g. {missing}); refit it")
        n_tokens = plan.column("n_tokens").take(rows)
        repeats = plan.column("repeats").take(rows).to_numpy()
        encoded = token_ids_of(self.artifacts, self.inputs)
        token_ids = encoded.column("token_ids").take(pc.index_in(table.column("id"), value_set=encoded.column("id")))
        copies = []
        for repeat_index in range(int(repeats.max(initial=0))):
            chosen = np.flatnonzero(repeats > repeat_index)
            ids = token_ids.take(chosen) if repeat_index == 0 else pa.nulls(len(chosen), TOKEN_IDS.type)
            copies.append(_with_mixture_columns(table.take(chosen), n_tokens.take(chosen), repeat_index, ids))
        kept = pa.concat_tables(copies) if copies else MIXTURE.empty_table()
        unsampled = np.flatnonzero(repeats == 0)
        no_ids = pa.nulls(len(unsampled), TOKEN_IDS.type)  # the quarantine keeps the text, not its encoding
        dropped = _with_mixture_columns(table.take(unsampled), n_tokens.take(unsampled), 0, no_ids)
        dropped = dropped.append_column("drop_reason", pa.array([NOT_SAMPLED] * len(unsampled), pa.string()))
        return ShardOutput(kept.cast(MIXTURE), dropped.cast(dropped_schema(MIXTURE)), _token_stats(kept))


def _with_mixture_columns(
    table: pa.Table, n_tokens: pa.ChunkedArray, repeat_index: int, token_ids: pa.Array | pa.ChunkedArray
) -> pa.Table:
    repeat = pa.array(np.full(table.num_rows, repeat_index, dtype=np.int32))
    return (
        table.append_column("n_tokens", n_tokens)
        .append_column("repeat_index", repeat)
        .append_column(TOKEN_IDS.name, token_ids)
    )


def _token_stats(kept: pa.Table) -> dict[str, float]:
    """Tokens (copies counted) per domain and per licence (`tokens_by_licence/<SPDX expression>`: summed over
    shards, the realised share of each licence), and up-sampled copies."""
    stats: dict[str, float] = {}
    for column, prefix in (("domain", "tokens_"), ("licence", f"{TOKENS_BY_LICENCE}/")):
        grouped = kept.group_by(column).aggregate([("n_tokens", "sum")])
        by_value = zip(grouped.column(column).to_pylist(), grouped.column("n_tokens_sum").to_pylist(), strict=True)
        for value, tokens in by_value:
            stats[f"{prefix}{value}"] = float(tokens)
    stats["upsampled_copies"] = float(pc.sum(pc.greater(kept.column("repeat_index"), 0)).as_py() or 0)
    return dict(sorted(stats.items()))


def settings_of(cfg: PipelineConfig) -> dict[str, Any]:
    # the plan counts the BOS/EOS the packer adds to every document
    return {"mixture": cfg.mixture, "pack": cfg.pack.model_dump(mode="json", include={"add_bos", "add_eos"})}


def fit_map(input_url: str, cfg: PipelineConfig, shared: dict[str, str], partial_url: str) -> None:
    """One shard's token counts, with the shared tokenizer (tokenizing is the fit's CPU-heavy part)."""
    count_shard_tokens(input_url, shared["tokenizer"], cfg.mixture.num_threads, partial_url)


def fit_stage(partials: list[str], cfg: PipelineConfig, shared: dict[str, str], artifact_dir: str) -> dict[str, str]:
    """The repeat plan from the shards' token counts (each partial named after its input shard), over the training
    split only: two streaming passes over the counts, memory bounded whatever the corpus."""
    return plan_mixture(partials, cfg.mixture, shared["splits"], cfg.pack.frame_tokens, artifact_dir)


def build_stage(cfg: PipelineConfig, artifacts: dict[str, str]) -> MixtureStage:
    return MixtureStage(cfg.mixture, artifacts)
