"""µP: equal to standard parametrization at the base width, its scalings away from it, and the coordinate check."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

from pretrain_core.train.checkpoint.store import load_model
from pretrain_core.train.config import TrainConfig
from pretrain_core.train.model.gpt import GPT, ModelArgs
from pretrain_core.train.observe.coord_check import CoordCheckSettings, coord_check, render_coord_check
from pretrain_core.train.optim import build_optimizer
from pretrain_core.train.trainer import train


def _model(width: int, parametrization: str) -> GPT:
    torch.manual_seed(0)
    return GPT(ModelArgs(vocab_size=50, n_layer=2, n_head=2, d_model=width, max_seq_len=16,
                         parametrization=parametrization, mup_base_width=32))  # type: ignore[arg-type]  # fmt: skip


def test_mup_at_its_base_width_is_the_standard_model() -> None:
    ids = torch.randint(0, 50, (2, 16))
    assert torch.allclose(_model(32, "mup")(ids), _model(32, "standard")(ids), atol=1e-6)


def test_mup_scales_init_lr_output_and_attention_with_width() -> None:
    wide = _model(128, "mup")
    assert wide.args.width_mult == 4 and wide.args.attention_scale == pytest.approx(16**0.5 / 64)
    standard = _model(128, "standard")
    assert torch.allclose(wide.blocks["0"].mlp.up.weight, standard.blocks["0"].mlp.up.weight / 2)  # std / sqrt(4)
    assert torch.equal(wide.embed.weight, standard.embed.weight)  # input weights are not rescaled
    config = TrainConfig(model=None, n_layer=2, n_head=2, d_model=128, parametrization="mup", mup_base_width=32)
    hidden, vectors = build_optimizer(wide, config).param_groups
    assert hidden["lr"] == pytest.approx(config.optimizer.lr / 4) and vectors["lr"] == config.optimizer.lr
    assert all(p.dim() >= 2 for p in hidden["params"]) and any(p is wide.embed.weight for p in vectors["params"])


def test_a_mup_checkpoint_rebuilds_the_mup_model(tiny_config: Callable[..., TrainConfig]) -> None:
    config = tiny_config(parametrization="mup", mup_base_width=16, max_steps=2, checkpoint_every=2)
    result = train(config)
    model, meta = load_model(result.summary["checkpoint_url"])
    assert meta["model_args"]["parametrization"] == "mup" and model.args.width_mult == 2


def test_coordinate_check_grows_with_width_under_standard_and_stays_flat_under_mup() -> None:
    check = coord_check(CoordCheckSettings(widths=(32, 64, 128), base_width=32, steps=4, seeds=(0, 1), vocab_size=256))
    assert check.growth("standard") > 2 and check.growth("standard", "block 3") > 4
    assert 0.6 < check.growth("mup") < 1.5 and 0.5 < check.growth("mup", "block 3") < 1.5
    assert render_coord_check(check).startswith(b"\x89PNG")
