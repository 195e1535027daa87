"""`pretrain evaluate --lm-eval`: a Llama-block checkpoint handed to the harness's own `hf` model (through the HF
export) scores what our adapter scores on the same local tasks; results land beside the checkpoint."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from pretrain_core import storage
from pretrain_core.train.checkpoint.catalog import latest_checkpoint
from pretrain_core.train.config import TrainConfig
from pretrain_core.train.trainer import train
from pretrain_eval.harness import harness_table, run_harness
from tests.eval.test_lm_eval_adapter import local_tasks, offline_harness
from tests.train.token_corpus import build_token_data

__all__ = ["offline_harness"]  # a fixture this module uses


@pytest.fixture(scope="module")
def llama_run(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A small Llama-block run whose window (128) holds the tasks' longest choice, as the hf model requires."""
    pytest.importorskip("transformers", reason="the hf model is transformers' (eval extra)")
    root = tmp_path_factory.mktemp("harness")
    data = build_token_data(str(root / "tokens"), seq_len=128)
    config = TrainConfig(
        model=None, n_layer=2, n_head=4, n_kv_head=2, d_model=64, block="llama", seq_len=128, micro_batch_size=4,
        max_steps=3, warmup_steps=1, eval_every=3, checkpoint_every=3, num_threads=1, peak_flops_per_device=1e11,
        tokens_url=data.tokens_url, tokenizer_url=data.tokenizer_url, output_url=str(root / "run"),
    )  # fmt: skip
    train(config)
    return config.output_url


@pytest.mark.slow  # train, export, then lm-eval's harness loading both: end to end
def test_the_harness_hf_model_scores_the_export_as_our_adapter_scores_the_checkpoint(
    llama_run: str, offline_harness: Path
) -> None:
    run = llama_run
    checkpoint = str(latest_checkpoint(run))
    # the hf model refuses a continuation longer than its window (ours would score its last window): 24 characters
    # of the test tokenizer's 512 pieces stay well inside 128 tokens
    tasks_dir, _ = local_tasks(offline_harness, choice_chars=24)
    tasks = ["pretrain_continuation", "pretrain_rolling"]
    by_hf, url = run_harness(run, tasks, "hf", str(tasks_dir))
    ours, _ = run_harness(run, tasks, "pretrain", str(tasks_dir), threads=1)
    assert by_hf["pretrain_continuation"]["acc,none"] == pytest.approx(ours["pretrain_continuation"]["acc,none"])
    # rolling perplexity is windowed differently (the hf model: disjoint windows; ours: each token with a full one)
    assert math.isfinite(by_hf["pretrain_rolling"]["word_perplexity,none"])
    assert url == storage.join(checkpoint, "lm_eval-hf.json")
    assert (
        storage.read_json(url)["results"]["pretrain_continuation"]["acc,none"]
        == by_hf["pretrain_continuation"]["acc,none"]
    )
    assert "| pretrain_rolling | word_perplexity |" in harness_table(by_hf)
