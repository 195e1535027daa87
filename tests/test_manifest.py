from __future__ import annotations

from pretrain_core.manifest import ShardRecord, aggregate, config_hash


def _record(key: str, dropped: dict[str, int], stats: dict[str, float]) -> ShardRecord:
    return ShardRecord(
        key=key,
        config_hash="h",
        inputs=[f"in/{key}"],
        outputs=[f"out/{key}"],
        docs_in=10,
        docs_out=10 - sum(dropped.values()),
        dropped=dropped,
        stats=stats,
    )


def test_aggregate_sums_counts_and_keeps_extremes() -> None:
    manifest = aggregate(
        "dedup",
        "h",
        {},
        [
            _record("b", {"near_duplicate": 2}, {"clusters": 3, "largest_cluster": 4, "min_len": 5}),
            _record(
                "a", {"near_duplicate": 1, "exact_duplicate": 1}, {"clusters": 1, "largest_cluster": 2, "min_len": 9}
            ),
        ],
        1.5,
    )
    assert manifest.docs_in == 20 and manifest.docs_out == 16
    assert manifest.dropped == {"exact_duplicate": 1, "near_duplicate": 3}
    assert manifest.stats == {"clusters": 4, "largest_cluster": 4, "min_len": 5}
    assert [s.key for s in manifest.shards] == ["a", "b"]


def test_config_hash_chains_upstream() -> None:
    first = config_hash("clean", {"x": 1})
    assert config_hash("dedup", {"y": 2}, first) != config_hash("dedup", {"y": 2}, config_hash("clean", {"x": 2}))
    assert config_hash("clean", {"x": 1}) == first
