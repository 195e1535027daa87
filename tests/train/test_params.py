from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import get_args

import pytest
from pydantic import ValidationError

from pretrain_core.train.config import TrainConfig
from pretrain_core.train.flat_keys import FLAT_KEYS, SECTIONS
from pretrain_core.train.params import FORM_KNOBS, ModelPreset, TrainRunParams, default_run_name
from pretrain_core.train.sections.model import MODEL_PRESETS


def test_defaults_resolve_to_a_valid_config_under_the_run_name() -> None:
    params = TrainRunParams()
    cfg = params.to_train_config()
    assert isinstance(cfg, TrainConfig)
    assert cfg.output_url == f"outputs/train/{params.run_name}"
    assert (cfg.model.preset, cfg.max_steps, cfg.optimizer.lr, cfg.data.seq_len) == ("tiny", 200, 3e-3, 256)


def test_run_name_says_what_ran_and_when() -> None:
    assert default_run_name("small", 2000, datetime(2026, 12, 2, 23, 59, tzinfo=UTC)) == "train-small-step2000-20261202"
    before = datetime.now(UTC).strftime("%Y%m%d")
    name = TrainRunParams(model="124m", max_steps=7).run_name
    after = datetime.now(UTC).strftime("%Y%m%d")  # the test may run across midnight
    assert name in {f"train-124m-step7-{before}", f"train-124m-step7-{after}"}
    assert TrainRunParams(run_name="ablation-lr3e-4").output_url.endswith("/ablation-lr3e-4")


def test_presets_offered_are_the_model_presets() -> None:
    assert set(get_args(ModelPreset)) == set(MODEL_PRESETS)


@pytest.mark.parametrize(
    ("field", "value"),
    [("lr", -1e-3), ("lr", 0.0), ("max_steps", 0), ("model", "huge"), ("run_name", "../escape"), ("timeout_s", -5)],
)
def test_bad_values_are_refused_naming_the_field(field: str, value: object) -> None:
    with pytest.raises(ValidationError, match=re.escape(field)):
        TrainRunParams.model_validate({field: value})


def test_multi_node_without_rendezvous_is_refused_when_resolved() -> None:
    with pytest.raises(ValidationError, match="rdzv_endpoint"):
        TrainRunParams(nnodes=2).to_train_config()
    cfg = TrainRunParams(nnodes=2, rdzv_endpoint="node0:29500").to_train_config()
    assert (cfg.launch.nnodes, cfg.launch.rdzv_endpoint) == (2, "node0:29500")


def test_form_knobs_are_the_train_configs_fields_and_reach_it() -> None:
    form = TrainRunParams.model_fields
    for name in FORM_KNOBS:
        section, field = FLAT_KEYS.get(name, ("", name))
        config = (SECTIONS[section] if section else TrainConfig).model_fields[field]
        assert (form[name].default, form[name].metadata) == (config.default, config.metadata), name
        assert (form[name].description or "").startswith(config.description or ""), name  # + its bounds
    changed = {"max_steps": 7, "seq_len": 64, "lr": 1e-4, "tokens_url": "s3://b/tok", "checkpoint_every": 3}
    resolved = TrainRunParams(**changed).to_train_config()
    assert {
        name: resolved.setting(name) if name in FLAT_KEYS else getattr(resolved, name) for name in changed
    } == changed
