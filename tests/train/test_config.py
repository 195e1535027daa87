from __future__ import annotations

from typing import get_args

import pytest
from pydantic import ValidationError

from pretrain_core.train.config import EvalConfig, TrainConfig
from pretrain_core.train.sections.model import MODEL_PRESETS, ModelPreset


def test_defaults_are_the_tiny_cpu_demo() -> None:
    config = TrainConfig()
    assert config.model.shape() == MODEL_PRESETS["tiny"]
    assert (
        config.optimizer.weight_decay,
        config.optimizer.betas,
        config.optimizer.eps,
        config.optimizer.grad_clip,
    ) == (0.01, (0.9, 0.999), 1e-8, 1.0)
    assert config.model_args(8000).vocab_size == 8000 and config.model_args(8000).max_seq_len == config.data.seq_len
    assert EvalConfig().prompts and any("人" in p for p in EvalConfig().prompts)


def test_explicit_shape_overrides_the_preset() -> None:
    assert TrainConfig(model="124m", n_layer=2).model.shape() == (2, 12, 768)
    assert TrainConfig(model=None, n_layer=3, n_head=2, d_model=64).model.shape() == (3, 2, 64)


@pytest.mark.parametrize(
    "values, message",
    [
        ({"model": None, "n_layer": 2}, "must all be set"),
        ({"n_head": 3}, "heads of even size"),
        ({"nnodes": 2}, "rdzv_endpoint"),
        ({"betas": (0.9, 1.0)}, "betas"),
        ({"lr": 0}, "greater than 0"),
        ({"micro_batch": 4}, "Extra inputs"),
        ({"precision": "fp8"}, "fp16"),
        ({"precision": "fp16", "strategy": "fsdp"}, "sharded gradient scaler"),
    ],
)
def test_bad_values_are_refused_with_the_reason(values: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        TrainConfig(**values)  # type: ignore[arg-type]


def test_tokens_per_step_counts_every_rank_and_micro_batch() -> None:
    config = TrainConfig(seq_len=64, micro_batch_size=4, grad_accum_steps=3, nproc_per_node=2)
    assert config.tokens_per_step == 64 * 4 * 3 * 2


def test_every_field_is_documented() -> None:
    for model in (TrainConfig, EvalConfig):
        assert all(info.description for info in model.model_fields.values())


def test_every_model_preset_is_a_valid_shape_of_the_articles_sizes() -> None:
    assert set(MODEL_PRESETS) == set(get_args(ModelPreset))
    for name, (n_layer, n_head, d_model) in MODEL_PRESETS.items():
        config = TrainConfig(model=name)  # type: ignore[arg-type]
        args = config.model_args(vocab_size=32_000)
        assert d_model % n_head == 0 and args.head_dim % 2 == 0, name
        assert (args.n_layer, args.n_head, args.d_model) == (n_layer, n_head, d_model)
    sizes = {shape[2] for name, shape in MODEL_PRESETS.items() if name not in ("tiny", "small")}
    assert sizes == {768, 1024, 1536}  # the articles' hidden sizes
    assert max(shape[0] for shape in MODEL_PRESETS.values()) == 72
