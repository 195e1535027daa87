from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from pretrain_core.train.model.gpt import (
    GPT,
    ModelArgs,
    alibi_bias,
    alibi_slopes,
    apply_rope,
    cross_entropy,
    rope_tables,
)

ARGS = ModelArgs(vocab_size=97, n_layer=2, n_head=4, d_model=32, max_seq_len=16)


@pytest.fixture
def model() -> GPT:
    torch.manual_seed(0)
    return GPT(ARGS).eval()


def test_forward_shapes_and_initial_loss_near_uniform(model: GPT) -> None:
    idx = torch.randint(0, ARGS.vocab_size, (3, 16))
    logits = model(idx)
    assert logits.shape == (3, 16, ARGS.vocab_size)
    # small init: the untrained model predicts close to uniform, loss ≈ ln(V) on unrelated targets
    targets = torch.randint(0, ARGS.vocab_size, (3, 16))
    assert cross_entropy(logits, targets).item() == pytest.approx(torch.log(torch.tensor(97.0)).item(), abs=0.1)
    assert cross_entropy(logits, idx, reduction="none").shape == (3, 16)


def test_future_tokens_never_change_past_logits(model: GPT) -> None:
    idx = torch.randint(0, ARGS.vocab_size, (1, 12))
    changed = idx.clone()
    changed[0, 8:] = (changed[0, 8:] + 1) % ARGS.vocab_size
    a, b = model(idx), model(changed)
    assert torch.equal(a[:, :8], b[:, :8])
    assert not torch.allclose(a[:, 8:], b[:, 8:])


def test_embeddings_are_tied_and_counted_once(model: GPT) -> None:
    assert model.lm_head.weight is model.embed.weight
    per_block = 4 * 32 * 32 + 2 * 4 * 32 * 32 + 2 * 32  # q, k, v + proj, mlp up + down, two norms
    assert model.num_params() == 97 * 32 + 2 * per_block + 32


def test_residual_projections_get_depth_scaled_init(model: GPT) -> None:
    params = dict(model.named_parameters())
    assert params["blocks.0.attn.q.weight"].std().item() == pytest.approx(0.02, rel=0.1)
    for name in ("blocks.0.attn.proj.weight", "blocks.1.mlp.down.weight"):
        assert params[name].std().item() == pytest.approx(0.02 / 2, rel=0.1)  # 0.02 / sqrt(2 * n_layer)


def test_rope_rotates_without_changing_norms_and_encodes_relative_position() -> None:
    cos, sin = rope_tables(ModelArgs(vocab_size=10, n_layer=1, n_head=1, d_model=8, max_seq_len=16))
    q = torch.randn(1, 1, 16, 8)
    rotated = apply_rope(q, cos, sin)
    assert torch.allclose(rotated.norm(dim=-1), q.norm(dim=-1), atol=1e-5)
    same = torch.randn(8).expand(1, 1, 16, 8)  # one vector at every position
    r = apply_rope(same, cos, sin)[0, 0]
    # the dot product of positions (i, j) depends only on i - j
    assert torch.allclose(r[3] @ r[1], r[10] @ r[8], atol=1e-4)


def test_sequences_longer_than_the_context_are_refused(model: GPT) -> None:
    with pytest.raises(ValueError, match="max_seq_len"):
        model(torch.zeros(1, 17, dtype=torch.long))


def test_odd_head_dim_is_refused() -> None:
    with pytest.raises(ValueError, match="even size"):
        GPT(ModelArgs(vocab_size=10, n_layer=1, n_head=2, d_model=6, max_seq_len=4))


@pytest.mark.parametrize("encoding", ["rope", "alibi", "learned", "sinusoidal"])
def test_every_position_encoding_is_causal_and_tells_positions_apart(encoding: str) -> None:
    torch.manual_seed(0)
    model = GPT(replace(ARGS, position_encoding=encoding)).eval()  # type: ignore[arg-type]
    idx = torch.randint(0, ARGS.vocab_size, (1, 12))
    changed = idx.clone()
    changed[0, 8:] = (changed[0, 8:] + 1) % ARGS.vocab_size
    a, b = model(idx), model(changed)
    assert torch.allclose(a[:, :8], b[:, :8], atol=1e-6) and not torch.allclose(a[:, 8:], b[:, 8:])
    # without positions, causal attention is blind to the order of earlier tokens: swapping the first two would
    # leave the third position's output unchanged
    ordered, swapped = torch.tensor([[3, 7, 11]]), torch.tensor([[7, 3, 11]])
    assert not torch.allclose(model(ordered)[0, 2], model(swapped)[0, 2], atol=1e-5)
    assert ("pos_embed.weight" in dict(model.named_parameters())) == (encoding == "learned")


def test_alibi_slopes_follow_the_paper() -> None:
    assert alibi_slopes(8).tolist() == pytest.approx([2.0 ** -(i + 1) for i in range(8)])
    twelve = alibi_slopes(12).tolist()  # 8 from 2^(-8/8), then every other of the 16-head sequence
    assert twelve[:8] == pytest.approx([2.0 ** -(i + 1) for i in range(8)])
    assert twelve[8:] == pytest.approx([2.0 ** -(0.5 * (2 * i + 1)) for i in range(4)])
    bias = alibi_bias(torch.tensor([0.5]), 3)[0]
    assert bias[2].tolist() == [-1.0, -0.5, 0.0] and bias[0, 1] == float("-inf")


def test_dropout_acts_only_while_training() -> None:
    torch.manual_seed(0)
    model = GPT(replace(ARGS, dropout=0.1))
    idx = torch.randint(0, ARGS.vocab_size, (2, 16))
    model.train()
    assert not torch.equal(model(idx), model(idx))  # a different mask each pass
    model.eval()
    assert torch.equal(model(idx), model(idx))
    no_dropout = GPT(ARGS).eval()
    no_dropout.load_state_dict(model.state_dict())
    assert torch.equal(model(idx), no_dropout(idx))  # at evaluation, dropout changes nothing


def test_activation_checkpointing_gives_the_same_loss_and_gradients() -> None:
    idx = torch.randint(0, ARGS.vocab_size, (2, 16))
    grads = []
    for recompute in (False, True):
        torch.manual_seed(0)
        model = GPT(replace(ARGS, dropout=0.1)).train()
        model.activation_checkpointing = recompute
        torch.manual_seed(1)  # same dropout masks: recomputation replays the RNG state
        loss = cross_entropy(model(idx[:, :-1]), idx[:, 1:])
        loss.backward()
        grads.append((loss.item(), [p.grad.clone() for p in model.parameters() if p.grad is not None]))
    (loss_a, grads_a), (loss_b, grads_b) = grads
    assert loss_a == loss_b and all(torch.allclose(a, b, atol=1e-6) for a, b in zip(grads_a, grads_b, strict=True))
