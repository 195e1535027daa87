"""Mixture of experts: one expert is the dense MLP, routing and capacity are counted, balancing works both ways,
and a MoE model trains, checkpoints and reloads."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

from pretrain_core.train.checkpoint.store import load_model
from pretrain_core.train.config import TrainConfig
from pretrain_core.train.model.gpt import GPT, ModelArgs
from pretrain_core.train.model.moe import MixtureOfExperts, moe_aux_loss, moe_layers, moe_stats
from pretrain_core.train.trainer import train


def _args(**values: object) -> ModelArgs:
    return ModelArgs(vocab_size=40, n_layer=2, n_head=2, d_model=32, max_seq_len=16, **values)  # type: ignore[arg-type]


@pytest.mark.parametrize("block", ["gpt", "llama"])
def test_one_expert_top_one_is_the_dense_mlp(block: str) -> None:
    dense = GPT(_args(block=block))
    moe = GPT(_args(block=block, moe_experts=1, moe_top_k=1))
    state = {name.replace(".mlp.", ".mlp.experts.0."): tensor for name, tensor in dense.state_dict().items()}
    missing, unexpected = moe.load_state_dict(state, strict=False)
    assert sorted(missing) == sorted(f"blocks.{i}.mlp.{n}" for i in range(2) for n in ("router.weight", "expert_bias"))
    assert unexpected == []
    ids = torch.randint(0, 40, (2, 16))
    assert torch.allclose(moe(ids), dense(ids), atol=1e-6)


def test_tokens_over_capacity_are_dropped_and_counted() -> None:
    torch.manual_seed(0)
    layer = MixtureOfExperts(
        _args(moe_experts=4, moe_top_k=1, moe_capacity_factor=0.5), lambda a, h: torch.nn.Linear(a.d_model, a.d_model)
    )
    out = layer(torch.randn(1, 64, 32))
    assert layer.dropped >= 64 - 4 * 8  # each expert keeps at most 0.5 x 64 / 4 = 8 tokens
    assert int((out.abs().sum(dim=-1) == 0).sum()) == layer.dropped  # a dropped token gets nothing from the experts
    assert float(layer.load.sum()) == pytest.approx(1.0)


def test_the_balancing_loss_and_the_loss_free_bias() -> None:
    torch.manual_seed(0)
    model = GPT(_args(moe_experts=4, moe_top_k=2))
    model(torch.randint(0, 40, (2, 16)))
    aux = moe_aux_loss(model)
    assert aux is not None and aux.item() > 0 and aux.requires_grad
    assert set(moe_stats(model)) == {
        f"moe/layer{i}_{n}" for i in (0, 1) for n in ("max_load_over_mean", "dropped_tokens")
    }
    biased = GPT(_args(moe_experts=4, moe_top_k=1, moe_balance="bias"))
    layer = moe_layers(biased)[0]
    biased(torch.randint(0, 40, (2, 16)))
    assert moe_aux_loss(biased) == 0
    before = layer.load.clone()
    layer.update_bias()
    busiest, idlest = int(before.argmax()), int(before.argmin())
    assert layer.expert_bias[busiest] < 0 < layer.expert_bias[idlest]


def test_a_token_costs_the_dense_model_s_flops_and_the_model_trains_and_reloads(
    tiny_config: Callable[..., TrainConfig],
) -> None:
    dense, moe = GPT(_args()), GPT(_args(moe_experts=4, moe_top_k=2))
    assert moe.non_embedding_params() == dense.non_embedding_params() + 2 * 32 * 4  # plus the routers
    config = tiny_config(moe_experts=4, moe_top_k=2, moe_balance="bias", max_steps=4, checkpoint_every=4)
    result = train(config)
    assert result.summary["final_validation_loss"] < result.summary["initial_validation_loss"]
    model, meta = load_model(result.summary["checkpoint_url"])
    assert meta["model_args"]["moe_experts"] == 4 and len(moe_layers(model)) == 2
    assert any(float(layer.expert_bias.abs().sum()) > 0 for layer in moe_layers(model))  # the bias is checkpointed
