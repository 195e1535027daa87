"""Context extension: a run starts from another run's checkpoint at a longer sequence length with RoPE scaling."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pretrain_core.train.checkpoint.store import load_model
from pretrain_core.train.config import TrainConfig
from pretrain_core.train.trainer import train
from tests.train.token_corpus import build_token_data


def test_a_checkpoint_extended_to_twice_its_length_starts_from_its_weights(
    tiny_config: Callable[..., TrainConfig], tmp_path: Path
) -> None:
    short = train(tiny_config(max_steps=4, checkpoint_every=4))
    longer_data = build_token_data(str(tmp_path / "tokens-64"), seq_len=64)  # the same tokenizer, packed at 64
    short_run = str(Path(short.summary["checkpoint_url"]).parent.parent)  # a training output: its latest checkpoint
    extended_config = tiny_config(
        seq_len=64, tokens_url=longer_data.tokens_url, tokenizer_url=longer_data.tokenizer_url, max_steps=2,
        rope_scaling="yarn", rope_scaling_factor=2.0, init_from=short_run, output_url=str(tmp_path / "extended"),
    )  # fmt: skip
    extended = train(extended_config)
    model, meta = load_model(extended.summary["checkpoint_url"])
    assert meta["model_args"]["max_seq_len"] == 64 and model.args.rope_scaling == "yarn"
    assert model.args.rope_original_seq_len == 32  # stretched from the length the checkpoint was trained at
    before, _ = load_model(short.summary["checkpoint_url"])
    # two steps at a small lr moved the weights a little from the checkpoint's, not from a fresh initialisation
    moved = max(
        float((a - b).detach().abs().max()) for a, b in zip(model.parameters(), before.parameters(), strict=True)
    )
    assert 0 < moved < 0.05
    assert extended.summary["initial_validation_loss"] < short.summary["initial_validation_loss"]


def test_a_checkpoint_of_another_shape_is_refused_in_one_line(tiny_config: Callable[..., TrainConfig]) -> None:
    source = train(tiny_config(max_steps=1, checkpoint_every=1))
    wider = tiny_config(
        d_model=64, init_from=source.summary["checkpoint_url"], output_url=source.summary["checkpoint_url"] + "-wider"
    )
    with pytest.raises(ValueError, match="does not fit this model"):
        train(wider)
