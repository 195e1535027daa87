"""Train-time mixing: sequences drawn from per-domain groups by weights that may change over the run.

The draws form one global stream, a pure function of the seed, the schedule, the sequences and the number of
sequences per step: draw ``k`` gets the weights of the run's fraction ``k / (max_steps * sequences_per_step)``
and goes to the group with the most credit (each draw adds every group's weight to its credit and takes one from
the chosen group's: smooth weighted round-robin, so shares hold within one draw at any point, with no randomness to
replay). Within a group, sequences come in a seeded permutation per pass over the group. Every rank computes the
same stream and takes its slice of each global micro-batch, so the state (draws so far, credits, each group's
position) resumes exactly at any world size that keeps the global batch.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import Any

import numpy as np
import torch

from pretrain_core.train.sections.data import MixingConfig
from pretrain_core.train.shards.bill import Bill
from pretrain_core.train.shards.sequences import Sequences


def members(sequences: Sequences, group: str) -> np.ndarray:
    """The rows of a group: a domain's, or (``domain/bucket``) that domain's sequences of one quality bucket."""
    domain, _, bucket = group.partition("/")
    chosen = sequences.domains == domain
    return np.flatnonzero(chosen & (sequences.buckets == bucket) if bucket else chosen)


class MixedBatches:
    """Endless (inputs, targets) micro-batches for one rank, drawn by the schedule; `state_dict` resumes it."""

    def __init__(
        self,
        sequences: Sequences,
        mixing: MixingConfig,
        micro_batch_size: int,
        rank: int,
        world_size: int,
        seed: int,
        total_draws: int,
        state: dict[str, Any] | None = None,
    ) -> None:
        self.sequences, self.mixing, self.seed = sequences, mixing, seed
        self.micro_batch_size, self.rank, self.global_batch = micro_batch_size, rank, micro_batch_size * world_size
        self.total_draws = max(total_draws, 1)
        self.groups = mixing.groups
        self.members = {g: members(sequences, g) for g in self.groups}
        empty = [g for g, rows in self.members.items() if rows.size == 0]
        if empty:
            present = sorted(set(sequences.domains.tolist()) | {f"{d}/{b}" for d, b in zip(
                sequences.domains.tolist(), sequences.buckets.tolist(), strict=True)})  # fmt: skip
            raise ValueError(f"mixing weights name {empty}, which have no training sequences (there are {present})")
        state = state or {}
        self.draws = int(state.get("draws", 0))
        self.credits = np.array([float(state.get("credits", {}).get(g, 0.0)) for g in self.groups])
        self.taken = {g: int(state.get("taken", {}).get(g, 0)) for g in self.groups}
        self.bill = Bill.from_dict(state.get("bill"))
        self._orders: dict[tuple[str, int], np.ndarray] = {}

    def __iter__(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        return self

    def __next__(self) -> tuple[torch.Tensor, torch.Tensor]:
        rows = np.array([self._draw() for _ in range(self.global_batch)], dtype=np.int64)
        self.bill.add(self.sequences, rows)
        mine = rows[self.rank * self.micro_batch_size : (self.rank + 1) * self.micro_batch_size]
        batch = torch.from_numpy(self.sequences.ids[mine].astype(np.int64))
        return batch[:, :-1], batch[:, 1:]

    def _draw(self) -> int:
        self.credits += self.mixing.weights_at(min(self.draws / self.total_draws, 1.0))
        chosen = int(np.argmax(self.credits))  # ties: the first group by name
        self.credits[chosen] -= 1.0
        self.draws += 1
        group = self.groups[chosen]
        members = self.members[group]
        position = self.taken[group]
        self.taken[group] = position + 1
        return int(members[self._order(group, position // members.size)[position % members.size]])

    def _order(self, group: str, epoch: int) -> np.ndarray:
        """The group's visiting order in pass ``epoch``: by score in the first under a curriculum, else seeded."""
        key = (group, epoch)
        if key not in self._orders:
            self._orders = {k: v for k, v in self._orders.items() if k[0] != group}  # one pass per group held
            curriculum = self.mixing.curriculum
            if epoch == 0 and curriculum != "none":
                scores = self.sequences.scores[self.members[group]]
                order = np.argsort(scores if curriculum == "ascending" else -scores, kind="stable")
            else:
                tag = zlib.crc32(group.encode())
                order = np.random.default_rng([self.seed, tag, epoch]).permutation(self.members[group].size)
            self._orders[key] = order
        return self._orders[key]

    def state_dict(self) -> dict[str, Any]:
        return {
            "draws": self.draws,
            "credits": dict(zip(self.groups, self.credits.tolist(), strict=True)),
            "taken": dict(self.taken),
            "bill": self.bill.as_dict(),
        }
