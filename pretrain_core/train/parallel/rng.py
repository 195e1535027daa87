"""Dropout's random numbers under tensor parallelism: one stream for what the ranks of a tensor-parallel group
hold alike, another for what each holds alone (Megatron's RNG tracker, without state of its own).

Every rank seeds the default generator alike, so dropout on the replicated residual stream and embeddings draws
the same mask on every rank of a group, as it must (their copies would drift apart otherwise). Attention
probabilities are per head, and each rank holds other heads: there `heads_region` forks the default generator,
seeded from one draw of the default stream plus the rank's offset, so each rank's heads get masks of their own
while the default stream moves on alike everywhere. A fork's seed comes from the default stream, so activation
checkpointing's recomputation (which restores that stream) and a resumed run (whose checkpoint holds it) draw the
very same masks.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar

import torch

_HEADS_OFFSET: ContextVar[int | None] = ContextVar("heads_rng_offset", default=None)
_SEED_RANGE = 2**62


@contextmanager
def split_heads_rng(offset: int | None) -> Iterator[None]:
    """Inside, attention dropout forks per rank with ``offset`` (a tensor-parallel rank's, say; None: no fork)."""
    token = _HEADS_OFFSET.set(offset)
    try:
        yield
    finally:
        _HEADS_OFFSET.reset(token)


def heads_region(dropout: float) -> AbstractContextManager[None]:
    """Around dropout on this rank's heads: a fork of the default generator when heads are split and dropout on."""
    offset = _HEADS_OFFSET.get()
    return nullcontext() if offset is None or dropout == 0 else _forked(offset)


@contextmanager
def _forked(offset: int) -> Iterator[None]:
    seed = int(torch.randint(0, _SEED_RANGE, (1,)).item())  # the default stream moves on alike on every rank
    devices = [torch.cuda.current_device()] if torch.cuda.is_available() else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed((seed + offset * 1_000_003) % _SEED_RANGE)
        yield
