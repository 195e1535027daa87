from __future__ import annotations

from pretrain_core.train.config import TrainConfig
from pretrain_core.train.model.gpt import GPT, ModelArgs
from pretrain_core.train.optim import build_optimizer


def test_decay_only_on_linear_weights_never_on_norms_or_the_tied_embedding() -> None:
    model = GPT(ModelArgs(vocab_size=50, n_layer=2, n_head=2, d_model=16, max_seq_len=8))
    optimizer = build_optimizer(model, TrainConfig(lr=1e-3, weight_decay=0.01))
    decay, no_decay = optimizer.param_groups
    names = {id(p): n for n, p in model.named_parameters()}
    decayed = {names[id(p)] for p in decay["params"]}
    undecayed = {names[id(p)] for p in no_decay["params"]}
    assert decay["weight_decay"] == 0.01 and no_decay["weight_decay"] == 0.0
    assert "embed.weight" in undecayed and "norm.weight" in undecayed
    assert "blocks.0.attn.q.weight" in decayed and "blocks.1.mlp.down.weight" in decayed
    assert not any("norm" in n for n in decayed)
    assert decayed | undecayed == set(names.values())  # every parameter exactly once
    assert decay["betas"] == (0.9, 0.999) and decay["eps"] == 1e-8 and decay["lr"] == 1e-3
