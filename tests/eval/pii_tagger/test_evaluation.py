"""Held-out scoring: overlap counts, per-language keys, and misses lowering recall only."""

from __future__ import annotations

from pretrain_core.pii.classifier import NameAddressTagger
from pretrain_core.pii.spans import Span
from pretrain_eval.pii_tagger.evaluation import evaluate
from pretrain_eval.pii_tagger.training_data import Example


def test_found_and_missed_names(tagger: NameAddressTagger) -> None:
    examples = [
        Example("Contact Dr. Weber for details.", (Span(12, 17, "person"),), "en"),
        Example("the word weber is lower-case here.", (Span(9, 14, "person"),), "en"),  # no tagger can see it
        Example("Die Datei wird beim Start gelesen.", (), "de"),
    ]
    report = evaluate(tagger, examples, threshold=0.8)
    assert report["person"] == {"precision": 1.0, "recall": 0.5, "predicted": 1.0, "gold": 2.0}
    assert report["person/en"]["recall"] == 0.5
    assert report["person/de"] == {"precision": 1.0, "recall": 1.0, "predicted": 0.0, "gold": 0.0}
