from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
import torch

from pretrain_core import schema, storage
from pretrain_core.train.shards.sequences import Sequences, TrainBatches, epoch_order, load_sequences
from tests.train.token_corpus import TokenData


def test_load_sequences_reads_every_shard_of_a_split(token_data: TokenData) -> None:
    train = load_sequences(token_data.tokens_url, "train", token_data.seq_len)
    validation = load_sequences(token_data.tokens_url, "validation", token_data.seq_len)
    assert train.ids.shape[1] == token_data.seq_len + 1 and train.ids.dtype == np.int32
    assert len(train) > 3 * len(validation) > 0
    assert set(train.domains) == {"general", "specialist", "code"}
    assert train.ids.min() >= 0 and train.ids.max() < token_data.vocab_size
    assert len(load_sequences(token_data.tokens_url, "no-such-split", token_data.seq_len)) == 0


def test_wrong_sequence_length_is_an_error(token_data: TokenData) -> None:
    with pytest.raises(ValueError, match="config wants 17"):
        load_sequences(token_data.tokens_url, "train", 16)


def test_missing_shards_are_an_error(tmp_path: object) -> None:
    with pytest.raises(FileNotFoundError):
        load_sequences(str(tmp_path), "train", 8)


def test_order_depends_only_on_seed_epoch_and_count() -> None:
    assert np.array_equal(epoch_order(1, 0, 100), epoch_order(1, 0, 100))
    assert not np.array_equal(epoch_order(1, 0, 100), epoch_order(1, 1, 100))
    assert not np.array_equal(epoch_order(1, 0, 100), epoch_order(2, 0, 100))
    assert sorted(epoch_order(1, 3, 100)) == list(range(100))


def _rows(n: int) -> Sequences:
    """Row i holds the ids i, i+1, ..., so a batch tells which rows it came from; domains and sources by row."""
    ids = (np.arange(n)[:, None] + np.arange(5)[None, :]).astype(np.int32)
    licences = np.empty(n, dtype=object)
    licences[:] = [("MIT",) if i % 2 else ("MIT", "CC0-1.0") for i in range(n)]
    domains = np.array(["general", "specialist", "code"])[np.arange(n) % 3]
    buckets = np.array(["head", "middle", "tail"])[np.arange(n) % 5 % 3]
    return Sequences(ids, domains, np.array([f"source-{i % 4}" for i in range(n)]), licences, buckets,
                     np.linspace(0, 1, n, dtype=np.float32))  # fmt: skip


def test_ranks_take_disjoint_slices_of_the_same_global_batch() -> None:
    rows = _rows(40)
    per_rank = [TrainBatches(rows, 3, rank, 2, seed=7) for rank in range(2)]
    single = TrainBatches(rows, 6, 0, 1, seed=7)
    for _ in range(8):  # crosses an epoch boundary: 40 rows, 6 per micro-step
        (a, _), (b, _) = next(per_rank[0]), next(per_rank[1])
        whole, target = next(single)
        assert torch.equal(torch.cat([a, b]), whole)
        assert torch.equal(target[:, :-1], whole[:, 1:])  # targets are inputs shifted by one
    assert (per_rank[0].epoch, per_rank[0].position) == (1, 12)


def test_an_epoch_visits_each_row_once_and_drops_the_short_tail() -> None:
    batches = TrainBatches(_rows(20), 6, 0, 1, seed=3)
    seen = [int(x) for _ in range(3) for x in next(batches)[0][:, 0]]
    assert len(set(seen)) == 18
    next(batches)
    assert (batches.epoch, batches.position) == (1, 6)


def test_resuming_from_a_saved_state_replays_the_same_batches() -> None:
    rows = _rows(50)
    uninterrupted = TrainBatches(rows, 4, 1, 2, seed=11)
    expected = [next(uninterrupted)[0] for _ in range(20)]
    first = TrainBatches(rows, 4, 1, 2, seed=11)
    got = [next(first)[0] for _ in range(9)]
    resumed = TrainBatches(rows, 4, 1, 2, seed=11, state=first.state_dict())
    got += [next(resumed)[0] for _ in range(11)]
    assert all(torch.equal(a, b) for a, b in zip(expected, got, strict=True))


def test_the_bill_counts_every_ranks_share_and_is_replayed_for_an_old_state() -> None:
    """Rank 0's bill counts rank 1's rows too; a state saved before bills (epoch and position only) gets the same
    bill by replaying the order."""
    rows = _rows(50)
    batches, other = TrainBatches(rows, 4, 0, 2, seed=5), TrainBatches(rows, 4, 1, 2, seed=5)
    seen = []
    for _ in range(15):  # two epochs and a bit: 50 rows, 8 per micro-step
        seen += [next(batches)[0][:, 0], next(other)[0][:, 0]]
    firsts = torch.cat(seen).numpy()
    bill = batches.state_dict()["bill"]
    assert bill == other.state_dict()["bill"]
    assert bill["sequences"] == firsts.size == 120 and bill["tokens"] == 4 * 120
    assert bill["by"]["domain"] == {
        d: 4 * int((rows.domains[firsts] == d).sum()) for d in ("code", "general", "specialist")
    }
    assert bill["by"]["licence"] == {"MIT": 4 * 120, "CC0-1.0": 4 * int((firsts % 2 == 0).sum())}
    old = {"epoch": batches.epoch, "position": batches.position}
    assert TrainBatches(rows, 4, 0, 2, seed=5, state=old).state_dict()["bill"] == bill


def test_too_few_sequences_for_one_batch_is_an_error() -> None:
    with pytest.raises(ValueError, match="cannot fill"):
        TrainBatches(_rows(5), 4, 0, 2, seed=0)


def test_shards_are_read_through_fsspec(memory_url: str) -> None:
    url = storage.join(memory_url, "tokens")
    table = pa.table(
        {"input_ids": [[1, 2, 3], [4, 5, 6]], "domain": ["code", "general"], "source": ["cpython", "handbook"],
         "licences": [["PSF-2.0"], ["GPL-2.0-or-later OR CC-BY-SA-3.0"]], "doc_ids": [["a"], ["b"]],
         "split": ["train", "test"], "quality_bucket": ["head", "tail"], "quality_score": [0.9, 0.1]},
        schema=schema.TOKENS,
    )  # fmt: skip
    storage.write_parquet(storage.join(url, "data", "00000.parquet"), table)
    test = load_sequences(url, "test", 2)
    assert test.ids.tolist() == [[4, 5, 6]] and test.domains.tolist() == ["general"]
    assert test.sources.tolist() == ["handbook"] and test.buckets.tolist() == ["tail"]


def test_shards_written_before_the_quality_columns_read_as_unscored(memory_url: str) -> None:
    url = storage.join(memory_url, "old-tokens")
    old_schema = pa.schema([f for f in schema.TOKENS if not f.name.startswith("quality_")])
    old = pa.table({"input_ids": [[1, 2, 3]], "domain": ["code"], "source": ["s"], "licences": [["MIT"]],
                    "doc_ids": [["a"]], "split": ["train"]}, schema=old_schema)  # fmt: skip
    storage.write_parquet(storage.join(url, "data", "00000.parquet"), old)
    train = load_sequences(url, "train", 2)
    assert train.buckets.tolist() == ["unscored"] and np.isnan(train.scores).all()
