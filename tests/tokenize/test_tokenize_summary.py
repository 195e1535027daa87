from pretrain_core.tokenize.summary import summarize_tokens


def test_flat_stats_become_a_table_per_split() -> None:
    stats = {
        "tokens_general_train": 600.0,
        "tokens_code_train": 400.0,
        "tokens_code_validation": 50.0,
        "sequences_train": 7.0,
        "sequences_validation": 1.0,
        "tokens_discarded_tail": 12.0,
    }
    summary = summarize_tokens(stats)
    assert summary["tokens"] == {"train": {"code": 400, "general": 600}, "validation": {"code": 50}, "test": {}}
    assert summary["shares"] == {"train": {"code": 0.4, "general": 0.6}, "validation": {"code": 1.0}}
    assert summary["sequences"] == {"train": 7, "validation": 1, "test": 0}
    assert summary["tokens_discarded_tail"] == 12
