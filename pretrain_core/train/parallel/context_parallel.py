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
    """Attention of this rank's (B, H, T / cp, D) queries over the whole sequence's keys and values: gathered
    from the group, attended one rank's block at a time, merged by log-sum-exp. ``slopes`` (H,) add ALiBi's
    distance penalty; ``scale`` replaces 1 / sqrt(head_dim) (µP). Computed in fp32 whatever the autocast dtype
    (the merge subtracts exponents)."""
    dtype = q.dtype
    q = q.float()
    outputs, lses = [], []
    for rank, (k_block, v_block) in enumerate(shard.gather(k, v)):
        distance = shard.positions[:, None] - shard.group_positions[rank][None, :]  # (Tq, Tk): query - key
        mask = distance >= 0 if causal else torch.ones_like(distance, dtype=torch.bool)
        bias = None if slopes is None else -slopes[:, None, None] * distance.abs().float()  # (H, Tq, Tk)
        out, lse = _block(q, k_block.float(), v_block.float(), mask, bias, scale)
        outputs.append(out)
        lses.append(lse)
    merged_lse = torch.logsumexp(torch.stack(lses), dim=0)  # (B, H, Tq, 1)
    merged = sum(out * torch.exp(lse - merged_lse) for out, lse in zip(outputs, lses, strict=True))
    assert isinstance(merged, torch.Tensor)
    return merged.to(dtype)
