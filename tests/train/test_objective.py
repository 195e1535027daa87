"""The masked objective: BERT's 15 % / 80-10-10 masking, bidirectional attention, loss on hidden tokens only."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest
import torch

from pretrain_core.evaluate.evaluator import evaluate_checkpoint
from pretrain_core.generate.config import GenerationConfig
from pretrain_core.generate.decode import generate
from pretrain_core.train.checkpoint.store import load_model
from pretrain_core.train.config import EvalConfig, TrainConfig
from pretrain_core.train.model.gpt import GPT, ModelArgs
from pretrain_core.train.model.objective import IGNORE, mask_tokens
from pretrain_core.train.trainer import train

MASK = 1000


def test_masking_hides_fifteen_percent_eighty_ten_ten_and_targets_only_those() -> None:
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(0, MASK, (400, 250), generator=generator)
    inputs, targets = mask_tokens(ids, MASK, MASK, 0.15, generator)
    chosen = targets != IGNORE
    assert chosen.float().mean().item() == pytest.approx(0.15, abs=0.005)
    assert torch.equal(targets[chosen], ids[chosen]) and torch.equal(inputs[~chosen], ids[~chosen])
    masked = (inputs == MASK)[chosen].float().mean().item()
    kept = (inputs == ids)[chosen].float().mean().item()  # includes the rare random draw of the same token
    assert masked == pytest.approx(0.8, abs=0.01) and kept == pytest.approx(0.1, abs=0.01)
    short = mask_tokens(torch.zeros((50, 2), dtype=torch.long), MASK, MASK, 0.01, generator)[1]
    assert ((short != IGNORE).sum(dim=1) >= 1).all()  # every sequence teaches something


def test_a_masked_model_attends_both_ways() -> None:
    torch.manual_seed(0)
    model = GPT(ModelArgs(vocab_size=97, n_layer=2, n_head=4, d_model=32, max_seq_len=16, causal=False)).eval()
    idx = torch.randint(0, 97, (1, 12))
    changed = idx.clone()
    changed[0, 10] = (changed[0, 10] + 1) % 97
    assert not torch.allclose(model(idx)[:, :8], model(changed)[:, :8])  # the future is seen
    with pytest.raises(ValueError, match="generation needs a causal model"):
        generate(model, idx[0].tolist(), GenerationConfig(max_new_tokens=1))
    alibi = GPT(replace(model.args, position_encoding="alibi")).eval()
    assert not torch.allclose(alibi(idx)[:, :8], alibi(changed)[:, :8])


def test_a_masked_run_learns_and_is_evaluated_on_its_hidden_tokens(
    tiny_config: Callable[..., TrainConfig], memory_url: str
) -> None:
    result = train(tiny_config(output_url=f"{memory_url}/mlm", objective="masked", max_steps=12, eval_every=12))
    assert result.summary["final_validation_loss"] < result.summary["initial_validation_loss"]
    model, _ = load_model(result.summary["checkpoint_url"])
    assert not model.args.causal and model.args.mask_token_id == model.args.vocab_size - 1
    evaluation = evaluate_checkpoint(
        result.summary["checkpoint_url"], cfg=EvalConfig(batches_per_split=2, num_threads=1)
    )
    overall = evaluation.splits["validation"].overall
    assert overall is not None and overall.bits_per_byte is None and evaluation.samples == []
    assert 0.1 < overall.tokens / (overall.sequences * model.args.max_seq_len) < 0.2  # about 15 % scored
