"""Context parallelism: sequences sharded over ranks (a head and a tail chunk each), attention over the gathered
keys merged by log-sum-exp; forward and backward equal to the whole sequence's on gloo."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from pretrain_core.train.config import TrainConfig
from pretrain_core.train.model.gpt import GPT, ModelArgs, cross_entropy
from pretrain_core.train.parallel import context_parallel
from pretrain_core.train.parallel.context_parallel import SequenceShard, balanced_positions, sharded_sequences
from tests.train.layout_runs import run_both_ways

SEQ = 16
CP = 2


def test_each_rank_takes_a_head_and_a_tail_chunk_so_causal_work_is_even() -> None:
    assert balanced_positions(16, 2, 0).tolist() == [0, 1, 2, 3, 12, 13, 14, 15]
    assert balanced_positions(16, 2, 1).tolist() == [4, 5, 6, 7, 8, 9, 10, 11]
    shards = [balanced_positions(24, 3, rank) for rank in range(3)]
    assert sorted(torch.cat(shards).tolist()) == list(range(24))
    keys_seen = [int((positions + 1).sum()) for positions in shards]  # causal: query i sees i + 1 keys
    assert len(set(keys_seen)) == 1  # a contiguous split would give the last rank 5x the first's
    with pytest.raises(ValueError, match="does not cut into 2 x 3 equal chunks"):
        balanced_positions(16, 3, 0)


def _rank(rank: int, store: str, encoding: str, results: str) -> None:
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=CP)
    torch.manual_seed(0)
    model = GPT(ModelArgs(vocab_size=40, n_layer=2, n_head=4, d_model=32, max_seq_len=SEQ, position_encoding=encoding))
    batch = torch.randint(0, 40, (3, SEQ + 1), generator=torch.Generator().manual_seed(1))
    inputs, targets = batch[:, :-1], batch[:, 1:]
    whole_logits = model(inputs)
    cross_entropy(whole_logits, targets).backward()
    whole_grads = {name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None}
    model.zero_grad(set_to_none=True)
    shard = SequenceShard.of(SEQ, CP, rank, dist.group.WORLD, torch.device("cpu"))
    with sharded_sequences(shard):  # the forward and its backward, as a step enters it
        logits = model(shard.take(inputs))
        cross_entropy(logits, shard.take(targets)).backward()  # this rank's tokens: the mean of the ranks' means
    grad_error = 0.0
    for name, param in model.named_parameters():
        assert param.grad is not None
        dist.all_reduce(param.grad)
        param.grad /= CP
        grad_error = max(
            grad_error, float((param.grad - whole_grads[name]).abs().max() / whole_grads[name].abs().max())
        )
    logit_error = float((logits - shard.take(whole_logits)).abs().max())
    dist.destroy_process_group()
    Path(results, f"rank-{rank}.json").write_text(json.dumps({"logits": logit_error, "grads": grad_error}))


@pytest.mark.parametrize("encoding", ["rope", "alibi", "learned", "sinusoidal"])
def test_sharded_sequences_give_the_whole_sequences_logits_and_gradients(tmp_path: Path, encoding: str) -> None:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    mp.spawn(_rank, args=(str(tmp_path / "store"), encoding, str(tmp_path)), nprocs=CP, join=True)
    for rank in range(CP):
        measured = json.loads((tmp_path / f"rank-{rank}.json").read_text())
        assert measured["logits"] < 1e-5, measured
        assert measured["grads"] < 1e-4, measured


def test_two_rank_context_parallel_training_matches_one_process(
    tiny_config: Callable[..., TrainConfig], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Both ranks read the same sequences and take half the tokens of each: the losses and validation of one
    process reading whole sequences (DDP averages the two halves' gradients)."""
    config = tiny_config(nproc_per_node=2, context_parallel=2, backend="gloo", max_steps=4)
    assert config.tokens_per_step == 4 * 2 * 32  # one data-parallel replica
    run_both_ways(config, tmp_path, caplog)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_context_parallel_by_fsdp_data_parallel_with_alibi_matches_one_process(
    tiny_config: Callable[..., TrainConfig], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = tiny_config(
        nproc_per_node=4, context_parallel=2, strategy="fsdp", position_encoding="alibi", backend="gloo", max_steps=4
    )
    split, whole = run_both_ways(config, tmp_path, caplog)
    assert split["tokens_seen"] == whole["tokens_seen"]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"nproc_per_node": 2, "context_parallel": 2, "seq_len": 30}, "does not cut into 2 x context_parallel 2"),
        ({"nproc_per_node": 2, "context_parallel": 2, "dropout": 0.1}, "context parallelism does not support dropout"),
    ],
)
def test_a_context_parallel_layout_that_cannot_run_is_refused_up_front(
    tiny_config: Callable[..., TrainConfig], overrides: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        tiny_config(backend="gloo", **overrides)


@pytest.mark.parametrize("causal", [True, False], ids=["causal", "bidirectional"])
@pytest.mark.parametrize("alibi", [False, True], ids=["plain", "alibi"])
def test_fused_blocks_equal_the_plain_blocks_and_whole_sequence_attention(causal: bool, alibi: bool) -> None:
    """Every rank of a CP 4 group attends through SDPA's fused CPU kernel: outputs and the gradients of its queries
    and of every key and value equal the materialised blocks', and the outputs equal attention over whole
    sequences (with GQA: 2 key/value heads for 4 query heads, and µP's scale)."""
    seq, cp, heads = 32, 4, 4
    generator = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(2, h, seq, 8, generator=generator) for h in (heads, 2, 2))
    slopes = torch.tensor([0.5, 0.25, 0.125, 0.0625]) if alibi else None
    distance = torch.arange(seq)[:, None] - torch.arange(seq)[None, :]
    bias = torch.zeros(heads, seq, seq) if slopes is None else -slopes[:, None, None] * distance.abs().float()
    if causal:
        bias = bias.masked_fill(distance < 0, float("-inf"))
    whole = torch.softmax(
        q @ k.repeat_interleave(2, dim=1).transpose(-2, -1) * 0.3 + bias, dim=-1
    ) @ v.repeat_interleave(2, dim=1)
    for rank in range(cp):
        shard = SequenceShard.of(seq, cp, rank, None, torch.device("cpu"))
        results = {}
        for name, attend in (("fused", context_parallel._fused), ("plain", context_parallel._plain)):
            mine, keys, values = (
                t.clone().requires_grad_() for t in (shard.take(q.transpose(1, 2)).transpose(1, 2), k, v)
            )
            wide = context_parallel._heads_of
            gathered = [
                (wide(keys[:, :, positions], heads), wide(values[:, :, positions], heads))
                for positions in shard.group_positions
            ]
            out = attend(mine, gathered, shard, causal, slopes, 0.3)
            out.square().sum().backward()
            results[name] = (out, mine.grad, keys.grad, values.grad)
        for fused, plain in zip(results["fused"], results["plain"], strict=True):
            assert fused is not None and plain is not None
            torch.testing.assert_close(fused, plain, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(results["fused"][0], whole[:, :, shard.positions], rtol=1e-5, atol=1e-5)
