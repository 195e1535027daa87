"""Token shards → batches: a distributed, resumable iterator whose whole state is (epoch, position).

The order of training sequences is a pure function of (seed, epoch, number of sequences): a seeded permutation
per epoch. Every micro-step consumes the next `micro_batch_size * world_size` entries of the permutation and
rank r takes its slice, so resuming from a saved (epoch, position) replays exactly the batches an uninterrupted
run would have seen. All sequences of a split are held in memory (4 bytes per token per process): fine up to a
few hundred million tokens; beyond that, memory-map a cache instead.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import torch

from pretrain_core import schema, storage


@dataclass(frozen=True)
class Sequences:
    """All sequences of one split: ids (N, seq_len + 1) int32 and the domain and source of each row."""

    ids: np.ndarray
    domains: np.ndarray
    sources: np.ndarray

    def __len__(self) -> int:
        return int(self.ids.shape[0])


def shard_urls(tokens_url: str) -> list[str]:
    urls = storage.list_files(storage.join(tokens_url, "data"), suffix=".parquet")
    if not urls:
        raise FileNotFoundError(
            f"no token shards under {storage.join(tokens_url, 'data')}: name a finished build's tokenize output "
            "(`pretrain evaluate`/`export`: --tokens-url; training: --set storage.root=ROOT or train.data.tokens_url)"
        )
    return urls


def load_sequences(tokens_url: str, split: str, seq_len: int) -> Sequences:
    """Read every shard's rows of ``split``, in shard order, checking each has seq_len + 1 ids."""
    ids_parts: list[np.ndarray] = []
    domain_parts: list[np.ndarray] = []
    source_parts: list[np.ndarray] = []
    for url in shard_urls(tokens_url):
        table = schema.validate(storage.read_parquet(url), schema.TOKENS, url)
        table = table.filter(pc.equal(table["split"], split))
        if table.num_rows == 0:
            continue
        column = table["input_ids"].combine_chunks()
        assert isinstance(column, pa.ListArray)
        lengths = np.diff(column.offsets.to_numpy())
        if (lengths != seq_len + 1).any():
            raise ValueError(f"{url}: sequences of {sorted(set(lengths.tolist()))} ids, config wants {seq_len + 1}")
        ids_parts.append(column.flatten().to_numpy().astype(np.int32).reshape(-1, seq_len + 1))
        domain_parts.append(table["domain"].to_numpy(zero_copy_only=False).astype(str))
        source_parts.append(table["source"].to_numpy(zero_copy_only=False).astype(str))
    if not ids_parts:
        return Sequences(np.zeros((0, seq_len + 1), np.int32), np.zeros(0, str), np.zeros(0, str))
    return Sequences(np.concatenate(ids_parts), np.concatenate(domain_parts), np.concatenate(source_parts))


@dataclass(frozen=True)
class DataState:
    """Where the iterator stands: the epoch and the number of permutation entries already consumed."""

    epoch: int = 0
    position: int = 0


def epoch_order(seed: int, epoch: int, n: int) -> np.ndarray:
    """The visiting order of ``n`` sequences in ``epoch``: depends on nothing else."""
    return np.random.default_rng([seed, epoch]).permutation(n)


class TrainBatches:
    """Endless (inputs, targets) micro-batches for one rank; the remainder of an epoch too small for a full
    global micro-batch is skipped, so every rank always sees equal-sized batches."""

    def __init__(
        self,
        sequences: np.ndarray,
        micro_batch_size: int,
        rank: int,
        world_size: int,
        seed: int,
        state: DataState | None = None,
    ) -> None:
        self.global_batch = micro_batch_size * world_size
        if len(sequences) < self.global_batch:
            raise ValueError(f"{len(sequences)} training sequences cannot fill one micro-batch of {self.global_batch}")
        self.sequences = sequences
        self.micro_batch_size = micro_batch_size
        self.rank = rank
        self.seed = seed
        self.state = state or DataState()
        self._order = epoch_order(seed, self.state.epoch, len(sequences))

    def __iter__(self) -> TrainBatches:
        return self

    def __next__(self) -> tuple[torch.Tensor, torch.Tensor]:
        epoch, position = self.state.epoch, self.state.position
        if position + self.global_batch > len(self.sequences):
            epoch, position = epoch + 1, 0
            self._order = epoch_order(self.seed, epoch, len(self.sequences))
        start = position + self.rank * self.micro_batch_size
        rows = self.sequences[self._order[start : start + self.micro_batch_size]]
        self.state = DataState(epoch, position + self.global_batch)
        batch = torch.from_numpy(rows.astype(np.int64))
        return batch[:, :-1], batch[:, 1:]
