"""Token shards → batches: a distributed, resumable iterator whose state is (epoch, position) and a bill.

The order of training sequences is a pure function of (seed, epoch, number of sequences): a seeded permutation
per epoch (`mixing.MixedBatches` draws by per-domain weights instead). Every micro-step consumes the next
`micro_batch_size * world_size` entries of the permutation and rank r takes its slice, so resuming from a saved
(epoch, position) replays exactly the batches an uninterrupted run would have seen. All sequences of a split are
held in memory (4 bytes per token per process): fine up to a few hundred million tokens; beyond that, memory-map a
cache instead.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import torch

from pretrain_core import schema, storage
from pretrain_core.train.shards.bill import Bill


@dataclass(frozen=True)
class Sequences:
    """All sequences of one split: ids (N, seq_len + 1) int32 and, per row, its domain, source, licences (a tuple),
    and the quality bucket and score of its dominant document."""

    ids: np.ndarray
    domains: np.ndarray
    sources: np.ndarray
    licences: np.ndarray
    buckets: np.ndarray
    scores: np.ndarray

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def sha256(self) -> str:
        """The digest of the ids: a checkpoint records it, and a resume or a replayed bill refuses other ones."""
        return hashlib.sha256(self.ids.tobytes()).hexdigest()


def shard_urls(tokens_url: str) -> list[str]:
    urls = storage.list_files(storage.join(tokens_url, "data"), suffix=".parquet")
    if not urls:
        raise FileNotFoundError(
            f"no token shards under {storage.join(tokens_url, 'data')}: name a finished build's tokenize output "
            "(`pretrain evaluate`/`export`: --tokens-url; training: --set storage.root=ROOT or train.data.tokens_url)"
        )
    return urls


def load_sequences(tokens_url: str, split: str, seq_len: int) -> Sequences:
    """Read every shard's rows of ``split``, in shard order, checking each has seq_len + 1 ids; shards written
    before the quality columns read as unscored."""
    parts: list[tuple[np.ndarray, ...]] = []
    for url in shard_urls(tokens_url):
        table = schema.validate(schema.with_quality_columns(storage.read_parquet(url)), schema.TOKENS, url)
        table = table.filter(pc.equal(table["split"], split))
        if table.num_rows == 0:
            continue
        column = table["input_ids"].combine_chunks()
        assert isinstance(column, pa.ListArray)
        lengths = np.diff(column.offsets.to_numpy())
        if (lengths != seq_len + 1).any():
            raise ValueError(f"{url}: sequences of {sorted(set(lengths.tolist()))} ids, config wants {seq_len + 1}")
        licences = np.empty(table.num_rows, dtype=object)
        licences[:] = [tuple(row) for row in table["licences"].to_pylist()]
        parts.append(
            (
                column.flatten().to_numpy().astype(np.int32).reshape(-1, seq_len + 1),
                *(table[name].to_numpy(zero_copy_only=False).astype(str) for name in ("domain", "source")),
                licences,
                table["quality_bucket"].to_numpy(zero_copy_only=False).astype(str),
                table["quality_score"].to_numpy().astype(np.float32),
            )
        )
    if not parts:
        empty = np.zeros(0, str)
        return Sequences(np.zeros((0, seq_len + 1), np.int32), empty, empty, np.zeros(0, object), empty,
                         np.zeros(0, np.float32))  # fmt: skip
    return Sequences(*(np.concatenate(column) for column in zip(*parts, strict=True)))


def epoch_order(seed: int, epoch: int, n: int) -> np.ndarray:
    """The visiting order of ``n`` sequences in ``epoch``: depends on nothing else."""
    return np.random.default_rng([seed, epoch]).permutation(n)


class TrainBatches:
    """Endless (inputs, targets) micro-batches for one rank, in the order the corpus build mixed (each epoch a
    seeded permutation of every training sequence); the remainder of an epoch too small for a full global
    micro-batch is skipped, so every rank always sees equal-sized batches. Its state is (epoch, position) and the
    bill of what the run has read; a state saved before bills existed has its bill replayed from those two."""

    def __init__(
        self,
        sequences: Sequences,
        micro_batch_size: int,
        rank: int,
        world_size: int,
        seed: int,
        state: dict[str, Any] | None = None,
    ) -> None:
        self.global_batch = micro_batch_size * world_size
        if len(sequences) < self.global_batch:
            raise ValueError(f"{len(sequences)} training sequences cannot fill one micro-batch of {self.global_batch}")
        self.sequences = sequences
        self.micro_batch_size = micro_batch_size
        self.rank = rank
        self.seed = seed
        state = state or {}
        self.epoch, self.position = int(state.get("epoch", 0)), int(state.get("position", 0))
        self._order = epoch_order(seed, self.epoch, len(sequences))
        self.bill = Bill.from_dict(state["bill"]) if "bill" in state else self._replayed_bill()

    def _replayed_bill(self) -> Bill:
        bill = Bill()
        whole = len(self.sequences) // self.global_batch * self.global_batch
        for epoch in range(self.epoch):
            bill.add(self.sequences, epoch_order(self.seed, epoch, len(self.sequences))[:whole])
        bill.add(self.sequences, self._order[: self.position])
        return bill

    def __iter__(self) -> TrainBatches:
        return self

    def __next__(self) -> tuple[torch.Tensor, torch.Tensor]:
        if self.position + self.global_batch > len(self.sequences):
            self.epoch, self.position = self.epoch + 1, 0
            self._order = epoch_order(self.seed, self.epoch, len(self.sequences))
        rows = self._order[self.position : self.position + self.global_batch]
        self.bill.add(self.sequences, rows)
        self.position += self.global_batch
        mine = rows[self.rank * self.micro_batch_size : (self.rank + 1) * self.micro_batch_size]
        batch = torch.from_numpy(self.sequences.ids[mine].astype(np.int64))
        return batch[:, :-1], batch[:, 1:]

    def state_dict(self) -> dict[str, Any]:
        return {"epoch": self.epoch, "position": self.position, "bill": self.bill.as_dict()}
