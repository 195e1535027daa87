"""RoPE scaling: every method is plain RoPE at factor 1, and each stretches the frequencies the way its paper says."""

from __future__ import annotations

import math

import pytest
import torch

from pretrain_core.train.model.gpt import GPT, ModelArgs, rope_tables
from pretrain_core.train.model.rope_scaling import inverse_frequencies, scaled_frequencies

METHODS = ("linear", "ntk", "yarn", "llama3")


def _args(**values: object) -> ModelArgs:
    return ModelArgs(vocab_size=40, n_layer=1, n_head=2, d_model=64, max_seq_len=64, **values)  # type: ignore[arg-type]


@pytest.mark.parametrize("method", METHODS)
def test_a_factor_of_one_is_plain_rope(method: str) -> None:
    plain = rope_tables(_args())
    assert all(torch.equal(a, b) for a, b in zip(rope_tables(_args(rope_scaling=method)), plain, strict=True))
    torch.manual_seed(0)
    ids = torch.randint(0, 40, (1, 32))
    torch.manual_seed(1)
    scaled = GPT(_args(rope_scaling=method, rope_scaling_factor=1.0))
    torch.manual_seed(1)
    assert torch.equal(scaled(ids), GPT(_args())(ids))


def test_each_method_stretches_the_frequencies_as_published() -> None:
    plain = inverse_frequencies(32, 10000.0)
    linear, _ = scaled_frequencies(32, 10000.0, "linear", 4.0, 256)
    assert torch.allclose(linear, plain / 4)  # position interpolation: every pair slowed 4x
    ntk, _ = scaled_frequencies(32, 10000.0, "ntk", 4.0, 256)
    assert ntk[0] == plain[0] and torch.isclose(ntk[-1], plain[-1] / 4)  # fastest kept, slowest slowed 4x
    for method in ("yarn", "llama3"):
        parts, _ = scaled_frequencies(32, 10000.0, method, 4.0, 256)  # type: ignore[arg-type]
        turns = 256 * plain / (2 * math.pi)  # rotations over the original context
        assert torch.equal(parts[turns > 32], plain[turns > 32])  # local pairs untouched
        assert torch.allclose(parts[turns < 1], plain[turns < 1] / 4)  # pairs slower than the context interpolated
    _, temperature = scaled_frequencies(32, 10000.0, "yarn", 4.0, 256)
    assert temperature == pytest.approx(0.1 * math.log(4) + 1)


def test_the_scaling_is_part_of_the_model_args_a_checkpoint_records() -> None:
    args = _args(rope_scaling="yarn", rope_scaling_factor=4.0, rope_original_seq_len=16)
    assert ModelArgs(**args.to_dict()) == args
    cos, _ = rope_tables(args)
    assert cos.abs().max() == pytest.approx(0.1 * math.log(4) + 1, rel=1e-4)
