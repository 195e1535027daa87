"""The ablation flow end to end on a slice of the demo corpus: two arms, two seeds each, a tiny budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from flows.ablation import ablation
from pretrain_core import storage
from pretrain_core.ablation.heldout import read_heldout
from pretrain_core.ablation.spec import AblationSpec
from pretrain_core.pipeline import CorpusPipeline
from pretrain_core.tokenize.splits import SPLITS_FILE, load_boundaries

KEEP_ALL = (
    "quality.keep_buckets={general: [head, middle, tail], specialist: [head, middle, tail], code: [head, middle, tail]}"
)


@pytest.mark.slow
@pytest.mark.usefixtures("prefect_harness")
def test_two_arms_two_seeds_end_to_end_and_a_rerun_does_nothing_new(small_config_file: Path, tmp_path: Path) -> None:
    spec = AblationSpec.model_validate(
        {
            "name": "small",
            "output_root": str(tmp_path / "ablation"),
            "base_config": str(small_config_file),
            "arms": {"raw": {"overrides": ["dedup.method=none", KEEP_ALL]}, "curated": {"description": "defaults"}},
            "baseline": "raw",
            "seeds": 2,
            "token_budget": 6144,
            "curve_points": 2,
            "train_overrides": ["train.num_threads=1"],
            "heldout": {"arm": "curated", "docs_per_domain": 6, "max_chars": 800, "zero_shot_items": 5},
        }
    )
    report = ablation(spec)
    expected = {("raw", "bits_per_byte", "all"), ("curated", "bits_per_byte", "all")}
    assert {(f.arm, f.metric, f.group) for f in report.figures} >= expected | {
        ("curated", "accuracy", "continuation/all")
    }
    bpb = {f.arm: f for f in report.figures if (f.metric, f.group) == ("bits_per_byte", "all")}
    assert all(
        f.seeds == 2 and len(set(f.values)) == 2 and f.half_width is not None for f in bpb.values()
    )  # seeds differ
    [headline] = [c for c in report.comparisons if (c.metric, c.group) == ("bits_per_byte", "all")]
    assert headline.arm == "curated" and headline.baseline == "raw" and headline.verdict()
    text = storage.read_bytes(report.report_url).decode()
    assert "## Verdicts" in text and "curves.png" in text and storage.exists(report.plot_url or "")
    results = storage.read_parquet(report.results_url).to_pylist()
    assert {(r["arm"], r["seed"]) for r in results} == {(a, s) for a in ("raw", "curated") for s in (1234, 1235)}
    assert len({r["step"] for r in results}) >= 2  # a curve, not a point

    # the arms share what they agree on: one ingest and one clean folder, two dedup folders
    corpus = sorted(p.name.rsplit("-", 1)[0] for p in (tmp_path / "ablation" / "corpus").iterdir())
    assert corpus.count("ingest") == corpus.count("clean") == 1 and corpus.count("dedup") == 2

    # every held-out document is outside every arm's training split
    heldout = read_heldout(storage.join(spec.output_root, "heldout.parquet"))
    assert heldout.num_rows > 0
    for arm in spec.arms:
        splits = load_boundaries(storage.join(CorpusPipeline(spec.arm_config(arm)).root("splits"), SPLITS_FILE))
        assert "train" not in set(splits.split_of(heldout["id"].to_pylist(), heldout["domain"].to_pylist()))

    summaries = {
        arm: storage.read_json(storage.join(spec.train_config(arm, 1234).output_url, "train_summary.json"))
        for arm in spec.arms
    }
    again = ablation(spec)
    assert [f.values for f in again.figures] == [f.values for f in report.figures]
    for arm, summary in summaries.items():  # nothing retrained
        assert storage.read_json(storage.join(spec.train_config(arm, 1234).output_url, "train_summary.json")) == summary
