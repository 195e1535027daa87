"""The end-of-run report says which validation perplexity is which: training's sample and the evaluation's differ."""

from __future__ import annotations

from pretrain_core.report import RunReport


def test_the_two_validation_perplexities_are_named_by_what_they_measure() -> None:
    report = RunReport(
        root="out",
        stages={"clean": {"docs_in": 3, "docs_out": 2, "dropped": {"too_few_words": 1}}},
        train={"steps": 150, "num_params": 10, "tokens_per_second": 5.0, "initial_validation_perplexity": 8000.0,
               "final_validation_perplexity": 1100.0},
        train_sample_sequences=64,
        evaluations=[{"step": 150, "checkpoint": "ckpt", "validation": {"all": 1250.0, "code": 1600.0}}],
        evaluation_sequences=256,
    )  # fmt: skip
    lines = report.render().splitlines()
    assert "clean               3       2  too_few_words=1" in lines
    training = lines.index("validation perplexity in training (64 evenly spaced validation sequences, the split's "
                           "domain mix):")  # fmt: skip
    assert lines[training + 1 : training + 3] == ["  at step 0: 8000.0", "  at the end: 1100.0"]
    evaluation = lines.index(
        "checkpoint evaluation (up to 256 validation sequences, equal shares per domain and source):"
    )
    assert lines[evaluation + 1] == "  step 150: validation perplexity all=1250.0, code=1600.0 (ckpt)"
