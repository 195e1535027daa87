"""Context parallelism: each sequence is sharded along time across the ranks of a context-parallel group, so the
activations of a long sequence are split too (Megatron-Core's context parallelism with all-gather communication).

Causal attention makes late tokens costlier than early ones (they see more keys), so a rank does not take one
contiguous slice: the sequence is cut into 2 x cp chunks and rank r takes chunk r and chunk 2 cp - 1 - r, a head and
a tail, giving every rank the same attention work. Each rank computes queries, keys and values for its own tokens,
all-gathers the keys and values of the group (the all-gather's backward sums their gradients back to their owners),
and attends block by block, one source rank's keys at a time, merging the partial outputs by their log-sum-exp:
the merge a ring implementation does as the blocks arrive. Positions are the tokens' global ones, so RoPE, ALiBi and
absolute embeddings see what the unsharded model sees.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch.distributed._functional_collectives import all_gather_single_autograd

from pretrain_core.train.parallel.fused_blocks import MergedBlocks


def balanced_positions(seq_len: int, cp: int, cp_rank: int) -> torch.Tensor:
    """The global positions rank ``cp_rank`` holds: chunk r and chunk 2 cp - 1 - r of 2 x cp equal chunks."""
    if seq_len % (2 * cp):
        raise ValueError(f"a sequence of {seq_len} tokens does not cut into 2 x {cp} equal chunks")
    chunk = seq_len // (2 * cp)
    head, tail = cp_rank * chunk, (2 * cp - 1 - cp_rank) * chunk
    return torch.cat((torch.arange(head, head + chunk), torch.arange(tail, tail + chunk)))


@dataclass(frozen=True)
class SequenceShard:
    """This rank's share of every sequence of a batch, and what attention needs to see the rest."""

    positions: torch.Tensor  # (T / cp,) global positions of this rank's tokens, in the order it holds them
    group_positions: torch.Tensor  # (cp, T / cp): each rank's positions, in rank order (the all-gather's order)
    group: dist.ProcessGroup | None  # None: a group of one (tests of the maths without a process group)

    @classmethod
    def of(
        cls, seq_len: int, cp: int, cp_rank: int, group: dist.ProcessGroup | None, device: torch.device
    ) -> SequenceShard:
        positions = torch.stack([balanced_positions(seq_len, cp, rank) for rank in range(cp)]).to(device)
        return cls(positions[cp_rank], positions, group)

    def take(self, batch: torch.Tensor) -> torch.Tensor:
        """This rank's tokens of a (B, T, ...) batch."""
        return batch[:, self.positions]

    def gather(self, k: torch.Tensor, v: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Every rank's (B, H, T / cp, D) keys and values, in rank order; their gradients flow back to their
        owners. One collective for both: two would let ranks run their backwards in different orders."""
        if self.group is None:
            return [(k, v)]
        gathered = all_gather_single_autograd(torch.stack((k, v)).contiguous(), gather_dim=0, group=self.group)
        return [(pair[0], pair[1]) for pair in gathered.view(-1, 2, *k.shape).unbind(0)]


_ACTIVE: ContextVar[SequenceShard | None] = ContextVar("sequence_shard", default=None)


@contextmanager
def sharded_sequences(shard: SequenceShard | None) -> Iterator[None]:
    """Inside, the model computes on ``shard``'s tokens of every sequence (None: whole sequences): positions are
    the shard's global ones and attention gathers the group's keys and values. Entered around a forward and its
    backward, as torchtitan enters `context_parallel`; no module takes the shard as an argument."""
    token = _ACTIVE.set(shard)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def active_shard() -> SequenceShard | None:
    """The shard of the innermost `sharded_sequences`, if any."""
    return _ACTIVE.get()


def _block(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor,
    bias: torch.Tensor | None,
    scale: float | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention of queries over one block of keys: (output normalised within the block, its log-sum-exp).
    Rows that may see no key of the block get output 0 and log-sum-exp -inf, so the merge gives them no weight."""
    scores = q @ k.transpose(-2, -1) * (scale if scale is not None else q.shape[-1] ** -0.5)  # (B, H, Tq, Tk)
    if bias is not None:
        scores = scores + bias
    scores = scores.masked_fill(~mask, float("-inf"))
    peak = scores.amax(dim=-1, keepdim=True)
    peak = torch.where(torch.isfinite(peak), peak, torch.zeros_like(peak))
    weights = torch.exp(scores - peak)
    total = weights.sum(dim=-1, keepdim=True)
    seen = total.clamp_min(torch.finfo(total.dtype).tiny)  # 0 only where every key is masked
    lse = torch.where(total > 0, peak + torch.log(seen), torch.full_like(total, float("-inf")))
    return (weights @ v) / seen, lse


def sharded_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    shard: SequenceShard,
    causal: bool = True,
    slopes: torch.Tensor | None = None,
    scale: float | None = None,
) -> torch.Tensor:
    """Attention of this rank's (B, H, T / cp, D) queries over the whole sequence's keys and values, gathered
    from the group and merged by log-sum-exp. ``slopes`` (H,) add ALiBi's distance penalty; ``scale`` replaces
    1 / sqrt(head_dim) (µP). Computed in fp32 whatever the autocast dtype (the merge subtracts exponents). On CPU
    each chunk pair goes through SDPA's fused flash kernel (`fused_blocks.py`); elsewhere through the plain
    blockwise maths below."""
    dtype = q.dtype
    gathered = [(k_block.float(), v_block.float()) for k_block, v_block in shard.gather(k, v)]
    attend = _fused if q.device.type == "cpu" else _plain
    return attend(q.float(), gathered, shard, causal, slopes, scale).to(dtype)


def _plain(
    q: torch.Tensor,
    gathered: list[tuple[torch.Tensor, torch.Tensor]],
    shard: SequenceShard,
    causal: bool,
    slopes: torch.Tensor | None,
    scale: float | None,
) -> torch.Tensor:
    """One source rank's block at a time, its scores materialised."""
    outputs, lses = [], []
    for rank, (k_block, v_block) in enumerate(gathered):
        distance = shard.positions[:, None] - shard.group_positions[rank][None, :]  # (Tq, Tk): query - key
        mask = distance >= 0 if causal else torch.ones_like(distance, dtype=torch.bool)
        bias = None if slopes is None else -slopes[:, None, None] * distance.abs().float()  # (H, Tq, Tk)
        out, lse = _block(q, k_block, v_block, mask, bias, scale)
        outputs.append(out)
        lses.append(lse)
    merged_lse = torch.logsumexp(torch.stack(lses), dim=0)  # (B, H, Tq, 1)
    merged = sum(out * torch.exp(lse - merged_lse) for out, lse in zip(outputs, lses, strict=True))
    assert isinstance(merged, torch.Tensor)
    return merged


def _fused(
    q: torch.Tensor,
    gathered: list[tuple[torch.Tensor, torch.Tensor]],
    shard: SequenceShard,
    causal: bool,
    slopes: torch.Tensor | None,
    scale: float | None,
) -> torch.Tensor:
    """Chunk by chunk: each rank holds a head and a tail chunk, so a (query chunk, key chunk) pair is wholly
    visible, causal on its diagonal (the same positions), or wholly hidden (skipped); the pairs each query chunk
    sees are merged by `MergedBlocks`."""
    chunk = q.shape[2] // 2
    halves = []
    for half in range(2):
        rows = slice(half * chunk, (half + 1) * chunk)
        q_positions = shard.positions[rows]
        q_chunk = int(q_positions[0]) // chunk
        keys, values, diagonal, biases = [], [], [], []
        for rank, (k_block, v_block) in enumerate(gathered):
            for key_half in range(2):
                cols = slice(key_half * chunk, (key_half + 1) * chunk)
                k_positions = shard.group_positions[rank][cols]
                k_chunk = int(k_positions[0]) // chunk
                if causal and k_chunk > q_chunk:
                    continue
                on_diagonal = causal and k_chunk == q_chunk
                keys.append(_heads_of(k_block[:, :, cols], q.shape[1]))
                values.append(_heads_of(v_block[:, :, cols], q.shape[1]))
                diagonal.append(on_diagonal)
                if slopes is not None:
                    distance = (q_positions[:, None] - k_positions[None, :]).float()
                    bias = -slopes[None, :, None, None].float() * distance.abs()  # (1, H, c, c): the kernel's 4-D
                    biases.append(bias.masked_fill(distance < 0, float("-inf")) if on_diagonal else bias)
        stacked_biases = torch.stack(biases) if biases else None
        halves.append(
            MergedBlocks.apply(
                q[:, :, rows].contiguous(), torch.stack(keys), torch.stack(values), tuple(diagonal), stacked_biases,
                scale,
            )
        )  # fmt: skip
    return torch.cat(halves, dim=2)


def _heads_of(block: torch.Tensor, heads: int) -> torch.Tensor:
    """Grouped-query attention: each key/value head repeated for the query heads it serves."""
    return block if block.shape[1] == heads else block.repeat_interleave(heads // block.shape[1], dim=1)
