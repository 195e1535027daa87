"""The mixture measured on the demo corpus: realised token share per domain against the configured weights.

The input is the demo corpus (data/demo) as the pipeline's ingest stage reads it, each source with its domain
(general, specialist, code), brought to the mixture stage's input contract. For every setting in
``<set_dir>/settings.json`` (weights and budget; the rest is the demo config) the pipeline's own calls run: the
tokenizer fit, the mixture fit (token counts and plan) and the per-shard mixture stage, then the tokenize stage.

Figures per setting and domain:

- ``realised_share`` and ``share_error_pp`` (the bar): the domain's share of the tokens in the mixture stage's
  output (every copy of a document counted) and its distance from the weight, in percentage points.
- ``train_share_error_pp`` (ours, no bar): the same in the tokenize stage's train split, what the model sees. It
  differs by design: validation and test documents (at least ``min_heldout_docs`` per domain) leave training,
  BOS/EOS frame every document and each stream's tail is cut, all of which weigh more on a domain of few or
  short documents.
- The baseline, "Bernoulli sampling", is the usual first attempt on the same token counts and budget: every
  document is used floor(e) times and once more with probability frac(e), e being its domain's epochs.
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
from pretrain_core.pipeline import CorpusPipeline
from pretrain_core.stage_quality.demo_corpus import demo_config, ingested_shards
from pretrain_core.stage_quality.figures import OURS, Bar, Figure
from pretrain_core.tokenize.config import TokenizerConfig

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
        roots={
            "tokenizer": storage.join(work, "tokenizer"),  # fitted once: its config does not depend on the setting
            "mixture": storage.join(work, setting.name, "mixture"),
            "tokenize": storage.join(work, setting.name, "tokenize"),
        },
        inputs={"tokenizer": inputs, "mixture": inputs},
    )
    mixed = pipeline.run_stage("mixture")
    packed = pipeline.run_stage("tokenize")
    realised = _token_shares([pa.concat_tables(_data(mixed.outputs, ["domain", "n_tokens"]))], "n_tokens")
    train = _train_shares(_data(packed.outputs, ["domain", "split", "input_ids"]))
    plan = storage.read_parquet(mixed.artifacts["mixture_plan"])
    baseline = _token_shares([_bernoulli_copies(plan, mixed.artifacts["mixture_summary"], mixture.seed)], "n_tokens")
    figures = []
    for domain, weight in mixture.weights.items():
        group, docs = f"{setting.name}/{domain}", _documents(plan, domain)
        figures += _share_figures(group, OURS, realised.get(domain, 0.0), weight, Bar("<=", SHARE_BAR_PP), docs)
        gap = 100 * abs(train.get(domain, 0.0) - weight)
        figures.append(Figure(STAGE, group, OURS, "train_share_error_pp", gap, None, docs))
        figures += _share_figures(group, BASELINE, baseline.get(domain, 0.0), weight, None, docs)
    return figures


def _share_figures(group: str, system: str, share: float, weight: float, bar: Bar | None, docs: int) -> list[Figure]:
    return [
        Figure(STAGE, group, system, "realised_share", share, None, docs),
        Figure(STAGE, group, system, "share_error_pp", 100 * abs(share - weight), bar, docs),
    ]


def _data(outputs: Sequence[str], columns: list[str]) -> list[pa.Table]:
    return [storage.read_parquet(url, columns=columns) for url in outputs if "/data/" in url]


def _token_shares(tables: list[pa.Table], tokens: str) -> dict[str, float]:
    totals = pa.concat_tables(tables).group_by("domain").aggregate([(tokens, "sum")])
    counts = dict(zip(totals.column("domain").to_pylist(), totals.column(f"{tokens}_sum").to_pylist(), strict=True))
    total = sum(counts.values())
    return {domain: n / total for domain, n in counts.items()}


def _train_shares(tables: list[pa.Table]) -> dict[str, float]:
    """Share of training targets (seq_len per sequence) per domain in the train split."""
    train = pa.concat_tables(tables).filter(pc.equal(pc.field("split"), "train"))
    targets = pc.subtract(pc.list_value_length(train.column("input_ids")), 1)
    return _token_shares([pa.table({"domain": train.column("domain"), "targets": targets})], "targets")


def _bernoulli_copies(plan: pa.Table, summary_url: str, seed: int) -> pa.Table:
    """Documents (domain, n_tokens) as the baseline draws them for our plan's per-domain targets."""
    domains = plan.column("domain").to_numpy(zero_copy_only=False)
    tokens = plan.column("n_tokens").to_numpy().astype(np.int64)
    summary = storage.read_json(summary_url)["domains"]
    epochs = np.array([_epochs(summary[d]) for d in domains])
    draws = np.random.default_rng(seed).random(len(domains))
    repeats = np.floor(epochs) + (draws < epochs - np.floor(epochs))
    return pa.table({"domain": domains, "n_tokens": tokens * repeats.astype(np.int64)})


def _epochs(domain_summary: dict[str, float]) -> float:
    available = domain_summary["available_tokens"]
    return domain_summary["target_tokens"] / available if available else 0.0


def _documents(plan: pa.Table, domain: str) -> int:
    return int(pc.sum(pc.equal(plan.column("domain"), domain)).as_py() or 0)
