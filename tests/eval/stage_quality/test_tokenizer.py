"""The tokenizer's round trips and compression against a HF byte-level BPE, on a slice of the demo corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from pretrain_eval.stage_quality.figures import OURS, Figure
from pretrain_eval.stage_quality.tokenizer import (
    BASELINE,
    RATIO_BAR,
    baseline_round_trip_failures,
    evaluate,
    load_documents,
    train_byte_level_bpe,
)

SET_DIR = str(Path(__file__).resolve().parents[3] / "data" / "labelled" / "tokenizer")
LIMIT = 400  # demo documents, spread over every source but the WARC


@pytest.fixture(scope="module")
def figures() -> dict[tuple[str, str, str], Figure]:
    return {(f.group, f.system, f.metric): f for f in evaluate(SET_DIR, LIMIT)}


def test_the_labelled_documents_hold_what_tokenizers_lose() -> None:
    texts = load_documents(SET_DIR)
    assert any("\u2581" in t for t in texts)  # SentencePiece's own space mark
    assert any("\u200d" in t for t in texts) and any(ord(c) > 0xFFFF for t in texts for c in t)  # emoji sequences
    assert any("\f" in t for t in texts) and any("\r\n" in t for t in texts)


def test_every_document_round_trips(figures: dict[tuple[str, str, str], Figure]) -> None:
    for group, support in (("demo corpus", LIMIT), ("labelled documents", len(load_documents(SET_DIR)))):
        ours = figures[group, OURS, "round_trip_failures"]
        assert ours.value == 0 and ours.meets_bar and ours.support == support
        assert figures[group, BASELINE, "round_trip_failures"].value == 0


def test_compression_is_measured_per_domain_with_the_bar_overall(figures: dict[tuple[str, str, str], Figure]) -> None:
    overall = figures["held-out", OURS, "bytes_per_token_vs_baseline"]
    assert overall.bar is not None and overall.bar.value == RATIO_BAR
    ratio = figures["held-out", OURS, "bytes_per_token"].value / figures["held-out", BASELINE, "bytes_per_token"].value
    assert overall.value == pytest.approx(ratio)
    assert 0.9 < overall.value < 1.2  # a small tokenizer on the slice; the full run is in the docs
    for domain in ("general", "specialist", "code"):
        assert 1.5 < figures[f"held-out/{domain}", OURS, "bytes_per_token"].value < 6.0


def test_the_baseline_is_a_lossless_byte_level_bpe() -> None:
    texts = load_documents(SET_DIR)
    baseline = train_byte_level_bpe(texts, vocab_size=600)
    assert baseline.get_vocab_size() == 600
    assert baseline_round_trip_failures(baseline, texts) == []
