from __future__ import annotations

import math
from pathlib import Path

import pytest
import sentencepiece as spm

from pretrain_core import storage
from pretrain_core.evaluate.evaluator import evaluate_checkpoint, token_byte_lengths
from pretrain_core.train.checkpoint.catalog import checkpoint_url, latest_checkpoint, resolve_checkpoint
from pretrain_core.train.checkpoint.records import evaluation_url, is_evaluated
from pretrain_core.train.config import EvalConfig
from tests.train.token_corpus import TokenData

CFG = EvalConfig(
    batches_per_split=4, batch_size=8, max_new_tokens=12, num_threads=1, zero_shot_items=10, probe_samples=4
)


def test_per_domain_metrics_and_samples_of_a_trained_checkpoint(fresh_run: str) -> None:
    trained_output = fresh_run
    result = evaluate_checkpoint(trained_output, cfg=CFG)  # shards and tokenizer from the checkpoint
    assert result.checkpoint_url == checkpoint_url(trained_output, 30) and result.step == 30
    for split in ("validation", "test"):
        metrics = result.splits[split]
        assert metrics.overall is not None and metrics.overall.sequences == 32
        assert set(metrics.domains) <= {"general", "specialist", "code"} and len(metrics.domains) >= 2
        assert sum(d.sequences for d in metrics.domains.values()) == 32
        for domain in [metrics.overall, *metrics.domains.values()]:
            assert math.isfinite(domain.perplexity) and 1 < domain.perplexity < 512  # better than uniform
            assert domain.perplexity == pytest.approx(math.exp(domain.loss))
            assert domain.bits_per_byte is not None and 0 < domain.bits_per_byte < 8
    assert [(s.prompt, s.mode) for s in result.samples] == [(p, m) for p in CFG.prompts for m in ("greedy", "sample")]
    assert all(s.completion for s in result.samples if s.mode == "sample")  # greedy may pick EOS, decoded as ""
    # zero-shot tasks from the test split (its licences are English), scored against their chance level
    assert {"last_word/en", "continuation/en", "last_word/all", "continuation/all"} <= set(result.tasks)
    for name, task in result.tasks.items():
        assert 0 < task.items <= CFG.zero_shot_items * (3 if name.endswith("/all") else 1)
        assert 0 <= task.accuracy <= 1 and task.chance == (0.25 if name.startswith("continuation") else 0.0)
    assert result.generation is not None and result.generation.samples == CFG.probe_samples
    assert 0 < result.generation.distinct_1 <= 1 and 0 <= result.generation.repeated_3gram_rate <= 1
    assert result.probes is not None and set(result.probes.pair_gaps) == {"en", "zh"}
    written = storage.read_json(storage.join(result.checkpoint_url, "eval.json"))
    assert written == result.model_dump(mode="json")
    assert storage.read_json(evaluation_url(trained_output, result.step)) == written  # the record that outlives it


def test_scores_and_samples_are_reproducible(fresh_run: str) -> None:
    trained_output = fresh_run
    a = evaluate_checkpoint(latest_checkpoint(trained_output) or "", cfg=CFG)
    b = evaluate_checkpoint(trained_output, cfg=CFG, reevaluate=True)  # a real second evaluation
    assert a.splits == b.splits and a.samples == b.samples


def test_the_first_evaluation_of_a_checkpoint_stands(fresh_run: str, caplog: pytest.LogCaptureFixture) -> None:
    trained_output = fresh_run
    first = evaluate_checkpoint(trained_output, cfg=CFG)
    stored = evaluation_url(trained_output, first.step)
    before = storage.read_bytes(stored)
    assert evaluate_checkpoint(trained_output, cfg=CFG) == first and storage.read_bytes(stored) == before
    other_settings = CFG.model_copy(update={"max_new_tokens": 4})
    assert evaluate_checkpoint(trained_output, cfg=other_settings) == first  # not evaluated twice, but said so
    assert "already evaluated with other settings" in caplog.text
    replaced = evaluate_checkpoint(trained_output, cfg=other_settings, reevaluate=True)
    assert replaced.config["max_new_tokens"] == 4 and storage.read_bytes(stored) != before


def test_a_failed_evaluation_is_recorded_with_its_reason(fresh_run: str, tmp_path: Path) -> None:
    run = fresh_run
    url = latest_checkpoint(run) or ""
    with pytest.raises(FileNotFoundError):
        evaluate_checkpoint(url, tokens_url=str(tmp_path / "no-tokens"), cfg=CFG)
    step = int(url.rsplit("-", 1)[1])
    failure = storage.read_json(evaluation_url(run, step, failed=True))
    assert failure["error"].startswith("FileNotFoundError") and is_evaluated(run, step)


def test_byte_lengths_add_up_to_the_text(token_data: TokenData) -> None:
    sp = spm.SentencePieceProcessor(model_proto=storage.read_bytes(token_data.tokenizer_url))
    lengths = token_byte_lengths(sp)
    for text in ("Permission is hereby granted, free of charge.", "def f(x):\n    return x", "中文 text"):
        ids = sp.encode(text)
        # the leading word-boundary mark stands for a space the text does not have
        assert lengths[ids].sum() in (len(text.encode()), len(text.encode()) + 1)
    assert lengths[sp.eos_id()] == 0 and lengths[sp.unk_id()] == 0


def test_a_directory_without_checkpoints_is_an_error(tmp_path: object) -> None:
    with pytest.raises(FileNotFoundError, match="complete checkpoint"):
        resolve_checkpoint(str(tmp_path))


def test_scored_rows_share_each_domain_evenly_across_its_sources() -> None:
    import numpy as np

    from pretrain_core.evaluate.evaluator import balanced_rows

    domains = np.array(["general"] * 100 + ["code"] * 20)
    sources = np.array(["big"] * 90 + ["small"] * 10 + ["cpython"] * 20)  # "big" first and nine times larger
    rows = balanced_rows(domains, sources, 40, seed=3)
    picked = list(zip(domains[rows], sources[rows], strict=True))
    assert picked.count(("general", "big")) == picked.count(("general", "small")) == 10
    assert picked.count(("code", "cpython")) == 20
    assert len(set(rows.tolist())) == 40 and balanced_rows(domains, sources, 40, seed=3).tolist() == rows.tolist()
    assert balanced_rows(domains, sources, 40, seed=4).tolist() != rows.tolist()
    # a source with too few rows gives its share to the others
    few = balanced_rows(domains, sources, 60, seed=3)
    assert list(sources[few]).count("small") == 10 and list(sources[few]).count("big") == 20
