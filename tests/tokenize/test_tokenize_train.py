import hashlib
import logging
from collections.abc import Callable
from pathlib import Path

import pytest
import sentencepiece as spm

from pretrain_core import storage
from pretrain_core.config_base import ConfigError
from pretrain_core.tokenize.config import TokenizerConfig
from pretrain_core.tokenize.train import fit_tokenizer, sample_documents, tokenizer_sha256, training_chunks

ShardWriter = Callable[[list[dict[str, str]], Path, int], list[str]]


def test_training_is_byte_identical_across_runs_and_thread_counts(
    quality_shards: list[str], tokenizer_config: TokenizerConfig, tokenizer_artifacts: dict[str, str], tmp_path: Path
) -> None:
    again = fit_tokenizer(quality_shards, tokenizer_config, str(tmp_path / "again"))
    threaded = fit_tokenizer(
        quality_shards, tokenizer_config.model_copy(update={"num_threads": 2}), str(tmp_path / "threaded")
    )
    first = storage.read_bytes(tokenizer_artifacts["tokenizer"])
    assert storage.read_bytes(again["tokenizer"]) == first
    assert storage.read_bytes(threaded["tokenizer"]) == first
    assert storage.read_bytes(again["tokenizer_card"]) == storage.read_bytes(tokenizer_artifacts["tokenizer_card"])


def test_card_records_the_model_hash_and_size(tokenizer_artifacts: dict[str, str]) -> None:
    model = storage.read_bytes(tokenizer_artifacts["tokenizer"])
    assert tokenizer_sha256(tokenizer_artifacts) == hashlib.sha256(model).hexdigest()
    card = storage.read_json(tokenizer_artifacts["tokenizer_card"])
    assert card["vocab_size"] == spm.SentencePieceProcessor(model_proto=model).get_piece_size() == 1200
    assert card["training_chars"] <= 400_000


def test_model_learns_line_breaks_and_indentation(tokenizer_artifacts: dict[str, str]) -> None:
    tokenizer = spm.SentencePieceProcessor(model_proto=storage.read_bytes(tokenizer_artifacts["tokenizer"]))
    pieces = tokenizer.encode("def f():\n        return 1\n\n", out_type=str)
    assert "<0x0A>" not in pieces  # line breaks are in pieces learned from the text, never spelled as bytes
    assert any("\n" in p for p in pieces)
    assert any(set(p) == {"▁"} and len(p) >= 4 for p in pieces)  # indentation is a whitespace-only piece


def test_sample_does_not_depend_on_shard_layout(
    documents: list[dict[str, str]], shard_writer: ShardWriter, tmp_path: Path
) -> None:
    two = shard_writer(documents, tmp_path / "two", 2)
    five = shard_writer(list(reversed(documents)), tmp_path / "five", 5)
    sample = sample_documents(two, 50_000, seed=3)
    assert sample == sample_documents(five, 50_000, seed=3)
    assert sum(map(len, sample)) >= 50_000
    assert sum(map(len, sample[:-1])) < 50_000  # the smallest prefix that covers the budget
    assert sample != sample_documents(two, 50_000, seed=4)


def test_sample_takes_everything_when_the_corpus_is_small(
    documents: list[dict[str, str]], quality_shards: list[str]
) -> None:
    assert sorted(sample_documents(quality_shards, 10**9, seed=0)) == sorted(d["text"] for d in documents)


def test_training_chunks_are_whole_lines_within_bounds_and_budget(documents: list[dict[str, str]]) -> None:
    texts = [d["text"] for d in documents]
    chunks = list(training_chunks(texts, max_chars=30_000, max_chunk_chars=256))
    assert chunks and all(0 < len(c) <= 256 and c.strip() for c in chunks)
    assert 30_000 - 256 < sum(map(len, chunks)) <= 30_000  # the budget's last cut is dropped when only blanks
    assert sum("\n" in c[:-1] for c in chunks) > len(chunks) // 2  # most chunks hold several lines
    every = "".join(training_chunks(texts[:1], max_chars=10**9, max_chunk_chars=64))
    assert every.split() == texts[0].split()  # cuts lose no word, only runs of blank lines between chunks


def test_text_too_small_for_the_vocabulary_trains_the_largest_it_supports_and_says_so(
    quality_shards: list[str], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cfg = TokenizerConfig(vocab_size=200_000, max_training_chars=5_000)
    with caplog.at_level(logging.WARNING, logger="pretrain_core.tokenize.train"):
        artifacts = fit_tokenizer(quality_shards[:1], cfg, str(tmp_path / "shrunk"))
    card = storage.read_json(artifacts["tokenizer_card"])
    fitted = card["vocab_size"]
    assert 0 < fitted < 200_000 and card["requested_vocab_size"] == 200_000
    assert spm.SentencePieceProcessor(model_file=artifacts["tokenizer"]).get_piece_size() == fitted
    assert f"at most {fitted} pieces, fewer than tokenizer.vocab_size (200000)" in caplog.text

    strict = cfg.model_copy(update={"shrink_vocab_to_fit": False})
    with pytest.raises(ConfigError, match=rf"--set tokenizer.vocab_size={fitted}$"):
        fit_tokenizer(quality_shards[:1], strict, str(tmp_path / "strict"))
    exact = storage.read_json(fit_tokenizer(quality_shards[:1], strict.model_copy(update={"vocab_size": fitted}),
                                            str(tmp_path / "exact"))["tokenizer_card"])  # fmt: skip
    assert exact["vocab_size"] == fitted and "requested_vocab_size" not in exact and exact["sha256"] == card["sha256"]
