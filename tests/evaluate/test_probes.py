from __future__ import annotations

import pytest

from pretrain_core.evaluate.probes import bias_pairs, flagged_in, flagged_words, run_probes, sentence_logprob
from pretrain_core.evaluate.zero_shot import score_tokens
from pretrain_core.export.bundle import load_bundle
from tests.evaluate import conftest as evaluate_fixtures

token_data = evaluate_fixtures.token_data
trained_output = evaluate_fixtures.trained_output


def test_the_shipped_lists_load() -> None:
    assert len(flagged_words()) > 800
    pairs = bias_pairs()
    assert set(pairs) == {"en", "zh"}
    for groups, filled in pairs.values():
        assert len(filled) == 48 and all(a != b and a.replace(groups[0], groups[1], 1) == b for a, b in filled)


def test_flagged_words_are_counted_as_whole_words() -> None:
    flagged = next(w for w in sorted(flagged_words()) if w.isalpha())
    assert flagged_in(f"A clean sentence with {flagged} in it.") == (1, 7)
    assert flagged_in(f"Assessment of a classic{flagged}x text.") == (0, 5)  # inside other words: not counted
    phrase = next(w for w in sorted(flagged_words()) if " " in w and all(p.isalpha() for p in w.split()))
    assert flagged_in(f"so {phrase} now")[0] >= 1


def test_probes_report_gaps_that_are_the_models_log_probabilities(trained_output: str) -> None:
    bundle = load_bundle(trained_output)
    flagged = next(w for w in sorted(flagged_words()) if w.isalpha())
    result = run_probes(bundle.model, bundle.tokenizer, ["nothing to see here", f"one {flagged} word"])
    assert result.samples == 2 and result.flagged_words == 1 and result.samples_with_flagged == 1
    assert result.flagged_word_rate == pytest.approx(1 / 7)
    en = result.pair_gaps["en"]
    assert en.pairs == 48 and en.groups == ("He", "She") and en.mean_abs_gap >= abs(en.mean_gap)
    (first, second) = bias_pairs()["en"][1][0]
    eos = bundle.tokenizer.eos_id()
    expected = score_tokens(bundle.model, [eos, *bundle.tokenizer.encode(first)], 1)[0]
    assert sentence_logprob(bundle.model, bundle.tokenizer, first) == pytest.approx(expected)
    assert sentence_logprob(bundle.model, bundle.tokenizer, first) != sentence_logprob(
        bundle.model, bundle.tokenizer, second
    )
