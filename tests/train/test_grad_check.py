"""The gradient check tells a correct backward from a wrong one."""

from __future__ import annotations

import pytest
import torch

from pretrain_core.train.model import gpt as model_module
from pretrain_core.train.model.gpt import GPT, ModelArgs
from pretrain_core.train.observe.grad_check import gradient_check

ARGS = ModelArgs(vocab_size=97, n_layer=2, n_head=4, d_model=32, max_seq_len=16)


class _DoubledBackward(torch.autograd.Function):
    """Identity forward, a backward twice too large: the kind of bug the check exists to catch."""

    @staticmethod
    def forward(ctx: object, x: torch.Tensor) -> torch.Tensor:
        return x.clone()

    @staticmethod
    def backward(ctx: object, grad: torch.Tensor) -> torch.Tensor:
        return 2 * grad


def test_a_correct_backward_passes_and_a_wrong_one_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    torch.manual_seed(0)
    model = GPT(ARGS)
    assert gradient_check(model, entries=16).passed(1e-2)
    monkeypatch.setattr(
        model_module.MLP,
        "forward",
        lambda self, x: self.down(_DoubledBackward.apply(torch.nn.functional.gelu(self.up(x)))),
    )
    assert not gradient_check(model, entries=16).passed(1e-2)
    assert all(p.grad is None for p in model.parameters())  # the check worked on a copy
