from __future__ import annotations

from pathlib import Path

import pytest

from pretrain_core.ablation.spec import CPU_PRESET, AblationSpec, load_ablation
from pretrain_core.config import ConfigError
from pretrain_core.pipeline import CorpusPipeline


def spec(**changes: object) -> AblationSpec:
    base = {
        "arms": {"raw": {"overrides": ["dedup.method=none"]}, "curated": {}},
        "baseline": "raw",
        "output_root": "/tmp/ablation-spec-test",
        "token_budget": 100_000,
        "train_overrides": ["train.micro_batch_size=4"],
    }
    return AblationSpec.model_validate({**base, **changes})


def test_every_arm_trains_the_same_model_on_the_same_tokens() -> None:
    ablation = spec()
    raw, curated = ablation.train_config("raw", 7), ablation.train_config("curated", 7)
    assert raw.max_steps == curated.max_steps == -(-100_000 // raw.tokens_per_step) and raw.seed == 7
    for field in ("n_layer", "d_model", "lr", "micro_batch_size", "seq_len"):
        assert raw.setting(field) == curated.setting(field), field
    assert raw.model == curated.model
    assert raw.checkpoint.checkpoint_every == raw.max_steps // ablation.curve_points
    assert raw.output_url.startswith("/tmp/ablation-spec-test/runs/raw-") and raw.output_url.endswith("/seed-7")
    assert raw.data.tokens_url != curated.data.tokens_url  # each arm its own shards


def test_arms_share_the_stages_their_settings_agree_on() -> None:
    ablation = spec(arms={"a": {}, "b": {"overrides": ["quality.score_cutoffs=[0.5, 0.9]"]}}, baseline="a")
    a, b = (CorpusPipeline(ablation.arm_config(arm)) for arm in ("a", "b"))
    assert a.cfg.storage.layout == "by_config" and a.cfg.storage.root == "/tmp/ablation-spec-test"
    assert [a.root(n) == b.root(n) for n in ("ingest", "clean", "dedup", "pii", "quality")] == [True] * 4 + [False]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"baseline": "nope"}, "arm 'nope' is not among the arms"),
        ({"heldout": {"arm": "other"}}, "arm 'other' is not among the arms"),
        ({"arms": {"raw": {"overrides": ["train.lr=1"]}, "curated": {}}}, "overrides train.*"),
        ({"arms": {"raw": {}}}, "at least 2"),
    ],
)
def test_bad_specs_are_refused_with_the_reason(changes: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        spec(**changes)


def test_arms_may_differ_in_what_the_model_is_fed() -> None:
    """The anneal preset: one corpus for both arms (same hash, built once), each its own mixing schedule."""
    anneal = load_ablation(CPU_PRESET.with_name("ablation-anneal.yaml"))
    constant, annealed = (anneal.train_config(arm, 1).data.mixing for arm in ("constant", "anneal-head"))
    assert constant is not None and annealed is not None and len(constant.points) == 1
    assert annealed.points[-1].weights == {"general/head": 0.6, "specialist/head": 0.3, "code/head": 0.1}
    pipelines = [CorpusPipeline(anneal.arm_config(arm)) for arm in ("constant", "anneal-head")]
    assert pipelines[0].config_hash("tokenize") == pipelines[1].config_hash("tokenize")
    assert anneal.arm_config("constant").pack.by_quality_bucket


def test_the_cpu_preset_loads_and_a_bad_file_is_a_config_error(tmp_path: Path) -> None:
    preset = load_ablation(CPU_PRESET)
    assert preset.baseline == "raw" and set(preset.arms) == {"raw", "curated", "no-quality"} and preset.seeds == 3
    assert preset.arm_config("raw").dedup.method == "none"
    bad = tmp_path / "arms.yaml"
    bad.write_text("arms: {a: {}, b: {}}\nbaseline: a\nseeds: 0\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="seeds"):
        load_ablation(bad)
