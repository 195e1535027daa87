"""The mixture measured on the demo corpus: realised token share per domain against the configured weights.

The input is the demo corpus (pretrain_core/data/demo) as the pipeline's ingest stage reads it, each source with its
domain (general, specialist, code), brought to the mixture stage's input contract. For every setting in
``<set_dir>/settings.json`` (weights and budget; the rest is the demo config) the pipeline's own calls run: the
tokenizer and split fits, the mixture fit (token counts and plan) and the per-shard mixture stage, then the tokenize
stage.

Figures per setting and domain, each with the bar:

- ``realised_share`` and ``share_error_pp``: the domain's share of the training tokens in the mixture stage's
  output (every copy of a train-split document, counted as the packer will: its tokens plus BOS/EOS; held-out
  documents pass once and are not counted) and its distance from the weight, in percentage points.
- ``train_share_error_pp``: the same in the tokenize stage's train split, what the model sees (training targets
  of the packed sequences). What is left between the two is each stream's tail, cut after its last full window.
- The baseline, "Bernoulli sampling", is the usual first attempt on the same token counts and budget: every
  training document is used floor(e) times and once more with probability frac(e), e being its domain's epochs.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pretrain_core import storage
from pretrain_core.config import PipelineConfig
from pretrain_core.mixture.config import MixtureConfig
from pretrain_core.mixture.plan import plan_rows
from pretrain_core.pipeline import CorpusPipeline
from pretrain_core.tokenize.config import TokenizerConfig
from pretrain_eval.stage_quality.demo_corpus import demo_config, ingested_shards
from pretrain_eval.stage_quality.figures import OURS, Bar, Figure

STAGE = "mixture"
BASELINE = "Bernoulli sampling"
SETTINGS_FILE = "settings.json"
SHARE_BAR_PP = 0.5  # most percentage points a realised share may be off its weight
# With a limit, a smaller tokenizer is trained: token counts change a little, the measurement does not.
SLICE_TOKENIZER = TokenizerConfig(vocab_size=4000, max_training_chars=200_000)


@dataclass(frozen=True)
class Setting:
    """Weights (None: the config's) and token budget (None: the largest within max_upsample) to measure."""

    name: str
    weights: dict[str, float] | None
    total_tokens: int | None


def load_settings(set_dir: str) -> list[Setting]:
    rows = json.loads(storage.read_bytes(storage.join(set_dir, SETTINGS_FILE)))
    return [Setting(r["name"], r["weights"], r["total_tokens"]) for r in rows]


def evaluate(set_dir: str, limit: int | None = None) -> list[Figure]:
    """Realised shares per setting and domain; with ``limit``, on that many documents of the corpus."""
    settings = load_settings(set_dir)
    with tempfile.TemporaryDirectory(prefix="pretrain-mixture-eval-") as work:
        cfg = demo_config(work, limit)
        if limit is not None:
            cfg = cfg.model_copy(update={"tokenizer": SLICE_TOKENIZER})
        inputs = ingested_shards(cfg, storage.join(work, "input"), limit)
        figures: list[Figure] = []
        for setting in settings:
            figures += measure_setting(cfg, setting, inputs, work)
    return figures


def measure_setting(cfg: PipelineConfig, setting: Setting, inputs: list[str], work: str) -> list[Figure]:
    """Run mixture and tokenize under ``setting`` and compare the realised shares with its weights."""
    mixture = MixtureConfig.model_validate(
        {
            **cfg.mixture.model_dump(),
            "weights": setting.weights or cfg.mixture.weights,
            "total_tokens": setting.total_tokens,
        }
    )
    pipeline = CorpusPipeline(
        cfg.model_copy(update={"mixture": mixture}),
        roots={  # tokenizer and splits are fitted once: their configs do not depend on the setting
            "tokenizer": storage.join(work, "tokenizer"),
            "splits": storage.join(work, "splits"),
            "mixture": storage.join(work, setting.name, "mixture"),
            "tokenize": storage.join(work, setting.name, "tokenize"),
        },
        inputs={"tokenizer": inputs, "splits": inputs, "mixture": inputs},
    )
    mixed = pipeline.run_stage("mixture")
    packed = pipeline.run_stage("tokenize")
    plan = plan_rows(mixed.artifacts)
    frame = cfg.pack.frame_tokens
    realised = _token_shares([_training_copies(_data(mixed.outputs, ["id", "domain", "n_tokens"]), plan, frame)])
    train = _train_shares(_data(packed.outputs, ["domain", "split", "input_ids"]))
    summary_url = mixed.artifacts["mixture_summary"]
    baseline = _token_shares([_bernoulli_copies(plan, summary_url, frame, mixture.seed)])
    bar = Bar("<=", SHARE_BAR_PP)
    figures = []
    for domain, weight in mixture.weights.items():
        group, docs = f"{setting.name}/{domain}", _documents(plan, domain)
        figures += _share_figures(group, OURS, realised.get(domain, 0.0), weight, bar, docs)
        gap = 100 * abs(train.get(domain, 0.0) - weight)
        figures.append(Figure(STAGE, group, OURS, "train_share_error_pp", gap, bar, docs))
        figures += _share_figures(group, BASELINE, baseline.get(domain, 0.0), weight, None, docs)
    return figures


def _share_figures(group: str, system: str, share: float, weight: float, bar: Bar | None, docs: int) -> list[Figure]:
    return [
        Figure(STAGE, group, system, "realised_share", share, None, docs),
        Figure(STAGE, group, system, "share_error_pp", 100 * abs(share - weight), bar, docs),
    ]


def _data(outputs: Sequence[str], columns: list[str]) -> list[pa.Table]:
    return [storage.read_parquet(url, columns=columns) for url in outputs if "/data/" in url]


def _token_shares(tables: list[pa.Table]) -> dict[str, float]:
    """Share of the ``tokens`` column per domain."""
    totals = pa.concat_tables(tables).group_by("domain").aggregate([("tokens", "sum")])
    counts = dict(zip(totals.column("domain").to_pylist(), totals.column("tokens_sum").to_pylist(), strict=True))
    total = sum(counts.values())
    return {domain: n / total for domain, n in counts.items()}


def _training_copies(tables: list[pa.Table], plan: pa.Table, frame: int) -> pa.Table:
    """(domain, tokens) of every copy of a train-split document in the mixture output, BOS/EOS counted."""
    copies = pa.concat_tables(tables)
    split = plan.column("split").take(pc.index_in(copies.column("id"), value_set=plan.column("id")))
    train = copies.filter(pc.equal(split, "train"))
    return pa.table({"domain": train.column("domain"), "tokens": pc.add(train.column("n_tokens"), frame)})


def _train_shares(tables: list[pa.Table]) -> dict[str, float]:
    """Share of training targets (seq_len per sequence) per domain in the train split."""
    train = pa.concat_tables(tables).filter(pc.equal(pc.field("split"), "train"))
    targets = pc.subtract(pc.list_value_length(train.column("input_ids")), 1)
    return _token_shares([pa.table({"domain": train.column("domain"), "tokens": targets})])


def _bernoulli_copies(plan: pa.Table, summary_url: str, frame: int, seed: int) -> pa.Table:
    """Training documents (domain, tokens) as the baseline draws them for our plan's per-domain targets."""
    train = plan.filter(pc.equal(plan.column("split"), "train"))
    domains = train.column("domain").to_numpy(zero_copy_only=False)
    tokens = train.column("n_tokens").to_numpy().astype(np.int64) + frame
    summary = storage.read_json(summary_url)["domains"]
    epochs = np.array([_epochs(summary[d]) for d in domains])
    draws = np.random.default_rng(seed).random(len(domains))
    repeats = np.floor(epochs) + (draws < epochs - np.floor(epochs))
    return pa.table({"domain": domains, "tokens": tokens * repeats.astype(np.int64)})


def _epochs(domain_summary: dict[str, float]) -> float:
    available = domain_summary["available_tokens"]
    return domain_summary["target_tokens"] / available if available else 0.0


def _documents(plan: pa.Table, domain: str) -> int:
    return int(pc.sum(pc.equal(plan.column("domain"), domain)).as_py() or 0)
