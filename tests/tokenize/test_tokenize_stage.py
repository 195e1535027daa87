import pickle
import zlib
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest

from pretrain_core import storage
from pretrain_core.manifest import ShardRecord
from pretrain_core.mixture.config import MixtureConfig
from pretrain_core.mixture.plan import fit_mixture
from pretrain_core.mixture.stage import MixtureStage
from pretrain_core.schema import TOKENS
from pretrain_core.stage import data_shards, plan_shards, run_shard
from pretrain_core.tokenize.config import PackConfig
from pretrain_core.tokenize.encode import load_tokenizer
from pretrain_core.tokenize.splits import SPLITS, fit_splits, load_boundaries
from pretrain_core.tokenize.stage import HELDOUT_REPEAT, PACK_TAIL, TokenizeStage

PACK = PackConfig(seq_len=64, validation_fraction=0.05, test_fraction=0.05, min_heldout_docs=2)


MIXTURE = MixtureConfig(weights={"general": 0.5, "specialist": 0.1, "code": 0.4}, max_upsample=2.0)


@pytest.fixture(scope="module")
def splits(quality_shards: list[str], tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Assigned on the mixture's input, as the pipeline does."""
    return fit_splits(quality_shards, PACK, str(tmp_path_factory.mktemp("splits")))


@pytest.fixture(scope="module")
def mixture_artifacts(
    quality_shards: list[str],
    tokenizer_artifacts: dict[str, str],
    splits: dict[str, str],
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, str]:
    tokenizer = tokenizer_artifacts["tokenizer"]
    root = str(tmp_path_factory.mktemp("plan"))
    return fit_mixture(quality_shards, MIXTURE, tokenizer, splits["splits"], PACK.frame_tokens, root)


@pytest.fixture(scope="module")
def mixture_shards(
    quality_shards: list[str], mixture_artifacts: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> list[str]:
    """The real mixture stage's output: general is up-sampled, specialist and code are sub-sampled."""
    root = tmp_path_factory.mktemp("mixture")
    stage = MixtureStage(MIXTURE, mixture_artifacts)
    for job in plan_shards("mixture", quality_shards, str(root), "h"):
        run_shard(job, stage, expands_rows=True)
    return data_shards(str(root))


@pytest.fixture(scope="module")
def artifacts(tokenizer_artifacts: dict[str, str], splits: dict[str, str]) -> dict[str, str]:
    return tokenizer_artifacts | splits


@pytest.fixture(scope="module")
def records(
    mixture_shards: list[str], artifacts: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> list[tuple[ShardRecord, str, str]]:
    stage = pickle.loads(pickle.dumps(TokenizeStage(PACK, artifacts)))  # shipped to workers
    jobs = plan_shards("tokenize", mixture_shards, str(tmp_path_factory.mktemp("tokens")), "h")
    return [(run_shard(job, stage, expands_rows=True), job.data_url, job.dropped_url) for job in jobs]


def test_every_sequence_has_seq_len_plus_one_valid_ids(
    records: list[tuple[ShardRecord, str, str]], tokenizer_artifacts: dict[str, str]
) -> None:
    vocab = load_tokenizer(tokenizer_artifacts["tokenizer"]).get_piece_size()
    for _, data_url, _ in records:
        table = storage.read_parquet(data_url)
        assert table.schema.equals(TOKENS) and table.num_rows > 0
        assert all(len(ids) == PACK.seq_len + 1 and max(ids) < vocab for ids in table["input_ids"].to_pylist())


def test_no_document_is_in_two_splits_and_every_domain_is_held_out(
    records: list[tuple[ShardRecord, str, str]],
) -> None:
    split_of: dict[str, set[str]] = {}
    held_out_domains: Counter[tuple[str, str]] = Counter()
    for _, data_url, dropped_url in records:
        for url in (data_url, dropped_url):
            for row in storage.read_parquet(url, columns=["doc_ids", "split", "domain"]).to_pylist():
                for doc_id in row["doc_ids"]:
                    split_of.setdefault(doc_id, set()).add(row["split"])
                if url == data_url and row["split"] != "train":
                    held_out_domains[(row["split"], row["domain"])] += 1
    assert all(len(splits) == 1 for splits in split_of.values())
    assert set(held_out_domains) == {(s, d) for s in ("validation", "test") for d in ("general", "specialist", "code")}


def test_each_sequence_lists_the_licences_of_the_documents_packed_into_it(
    mixture_shards: list[str], records: list[tuple[ShardRecord, str, str]]
) -> None:
    licence_of = {
        row["id"]: row["licence"]
        for url in mixture_shards
        for row in storage.read_parquet(url, columns=["id", "licence"]).to_pylist()
    }
    mixed = 0
    for _, data_url, _ in records:
        for row in storage.read_parquet(data_url, columns=["doc_ids", "licences"]).to_pylist():
            assert row["licences"] == sorted({licence_of[doc_id] for doc_id in row["doc_ids"]})
            mixed += len(row["licences"]) > 1
    assert mixed  # the test documents' licences alternate, so packing mixes them


def test_every_document_copy_is_packed_or_dropped_with_a_reason(
    mixture_shards: list[str], records: list[tuple[ShardRecord, str, str]]
) -> None:
    for shard_url, (record, data_url, dropped_url) in zip(mixture_shards, records, strict=True):
        copies = Counter(storage.read_parquet(shard_url)["id"].to_pylist())
        packed = {doc_id for ids in storage.read_parquet(data_url)["doc_ids"].to_pylist() for doc_id in ids}
        dropped = storage.read_parquet(dropped_url).to_pylist()
        dropped_copies = Counter(row["doc_ids"][0] for row in dropped)
        assert set(record.dropped) <= {PACK_TAIL}  # the mixture copies no held-out document
        for doc_id, n in copies.items():
            assert doc_id in packed or dropped_copies[doc_id] == n


def test_train_streams_hold_exactly_the_tokens_the_mixture_planned(
    records: list[tuple[ShardRecord, str, str]], mixture_artifacts: dict[str, str]
) -> None:
    """The plan counts each training copy's tokens plus BOS and EOS, as packing does, so its shares are the
    train split's (before each stream's tail is cut)."""
    planned = storage.read_json(mixture_artifacts["mixture_summary"])["domains"]
    for domain in ("general", "specialist", "code"):
        packed = sum(record.stats.get(f"tokens_{domain}_train", 0) for record, _, _ in records)
        assert packed == planned[domain]["realised_tokens"] > 0, domain


def test_further_copies_of_a_heldout_document_are_dropped(
    quality_shards: list[str], mixture_shards: list[str], artifacts: dict[str, str], tmp_path: Path
) -> None:
    """Under other splits (a mixture output fed to a standalone run) an up-sampled document may be held out: the
    held-out split still takes it once."""
    other = artifacts | fit_splits(quality_shards, PACK.model_copy(update={"split_seed": 1}), str(tmp_path))
    table = storage.read_parquet(mixture_shards[0])
    rows = zip(table["id"].to_pylist(), table["domain"].to_pylist(), table["repeat_index"].to_pylist(), strict=True)
    extra = [(i, d) for i, d, r in rows if r > 0]
    split = load_boundaries(other["splits"]).split_of([i for i, _ in extra], [d for _, d in extra])
    expected = Counter(i for (i, _), s in zip(extra, split, strict=True) if s != "train")
    output = TokenizeStage(PACK, other).process(table)
    dropped = [row for row in output.dropped.to_pylist() if row["drop_reason"] == HELDOUT_REPEAT]
    assert expected and Counter(row["doc_ids"][0] for row in dropped) == expected


def test_token_counts_add_up(mixture_shards: list[str], records: list[tuple[ShardRecord, str, str]]) -> None:
    for shard_url, (record, data_url, _) in zip(mixture_shards, records, strict=True):
        table = storage.read_parquet(data_url, columns=["split", "domain"])
        streams = set(zip(table["split"].to_pylist(), table["domain"].to_pylist(), strict=True))
        stream_tokens = sum(
            v for k, v in record.stats.items() if k.startswith("tokens_") and k.split("_")[-1] in SPLITS
        )
        sequences = sum(record.stats[f"sequences_{s}"] for s in SPLITS)
        assert sequences == table.num_rows
        # windows share one id with their neighbour, so a stream of n windows covers n * seq_len + 1 ids
        assert stream_tokens == sequences * PACK.seq_len + len(streams) + record.stats["tokens_discarded_tail"]
        rows = storage.read_parquet(shard_url, columns=["n_tokens"])
        assert stream_tokens <= sum(rows["n_tokens"].to_pylist()) + 2 * rows.num_rows


def test_documents_inside_a_window_decode_back_to_their_text(
    mixture_shards: list[str], artifacts: dict[str, str]
) -> None:
    shard = storage.read_parquet(mixture_shards[0])
    long_windows = PACK.model_copy(update={"seq_len": 2048})
    tokenizer = load_tokenizer(artifacts["tokenizer"])
    bos, eos = tokenizer.bos_id(), tokenizer.eos_id()
    whole = []
    for row in TokenizeStage(long_windows, artifacts).process(shard).kept.to_pylist():
        ids = row["input_ids"]
        starts = [i for i, t in enumerate(ids) if t == bos]
        whole += [tokenizer.decode(ids[s + 1 : ids.index(eos, s)]) for s in starts if eos in ids[s:]]
    assert len(whole) > 10
    assert set(whole) <= set(shard["text"].to_pylist())


def test_output_depends_on_the_documents_not_their_row_order(
    mixture_shards: list[str], artifacts: dict[str, str]
) -> None:
    table = storage.read_parquet(mixture_shards[0])
    first = TokenizeStage(PACK, artifacts).process(table)
    reversed_rows = TokenizeStage(PACK, artifacts).process(table.take(list(range(table.num_rows))[::-1]))
    assert first.kept.equals(reversed_rows.kept) and first.stats == reversed_rows.stats
    assert sorted(first.dropped["doc_ids"].to_pylist()) == sorted(reversed_rows.dropped["doc_ids"].to_pylist())


def test_stats_count_tokens_per_split_and_domain_and_sequences_per_split(
    records: list[tuple[ShardRecord, str, str]],
) -> None:
    stats: Counter[str] = Counter()
    for record, _, _ in records:
        stats.update(record.stats)
    validation = {key.split("_")[1] for key in stats if key.startswith("tokens_") and key.endswith("_validation")}
    assert validation == {"general", "specialist", "code"} and stats["tokens_code_train"] > 0
    assert sum(stats[f"sequences_{split}"] for split in SPLITS) == sum(r.docs_out for r, _, _ in records)


def test_ids_carried_from_the_mixture_are_reused_and_give_the_same_sequences(
    mixture_shards: list[str], artifacts: dict[str, str]
) -> None:
    table = storage.read_parquet(mixture_shards[0])
    carried = TokenizeStage(PACK, artifacts).process(table)
    without = table.set_column(
        table.schema.get_field_index("token_ids"), "token_ids", pa.nulls(table.num_rows, table["token_ids"].type)
    )
    encoded = TokenizeStage(PACK, artifacts).process(without)
    assert carried.kept.equals(encoded.kept) and carried.dropped.equals(encoded.dropped)
    documents = len(set(table["id"].to_pylist()))
    assert carried.stats["documents_ids_reused"] == documents and carried.stats["documents_encoded"] == 0
    assert encoded.stats["documents_ids_reused"] == 0 and encoded.stats["documents_encoded"] == documents


def test_ids_that_do_not_decode_to_the_text_are_encoded_again(
    mixture_shards: list[str], artifacts: dict[str, str]
) -> None:
    """Ids of another tokenizer (here: shifted past the vocabulary, or another document's) do not spell the
    document: they are replaced; where only some documents carry ids, the rest are encoded beside them."""
    table = storage.read_parquet(mixture_shards[0])
    carried = table["token_ids"].to_pylist()
    known = [row for row, ids in enumerate(carried) if ids is not None]
    shifted = [None if ids is None else [i + 1 for i in ids] for ids in carried]
    swapped = list(carried)
    for row, other in zip(known, known[1:] + known[:1], strict=True):
        swapped[row] = carried[other]
    halved = [ids if row % 2 else None for row, ids in enumerate(carried)]  # some reused, the rest encoded
    stage = TokenizeStage(PACK, artifacts)
    expected = stage.process(table).kept
    for foreign in (shifted, swapped, halved):
        column = pa.array(foreign, table["token_ids"].type)
        again = stage.process(table.set_column(table.schema.get_field_index("token_ids"), "token_ids", column))
        assert again.kept.equals(expected)
        reusable = [ids for ids in foreign if ids is not None] if foreign is halved else []
        assert again.stats["documents_ids_reused"] == len(reusable)


def test_packed_by_quality_bucket_every_sequence_holds_one_buckets_text(
    mixture_shards: list[str], artifacts: dict[str, str], tmp_path: Path
) -> None:
    """Buckets dealt to the documents by id; packed apart, a sequence's documents are all of its bucket (and its
    score is its dominant document's); packed together, sequences mix buckets and name the dominant one's."""
    buckets = ("head", "middle", "tail")
    rebucketed = []
    for index, url in enumerate(mixture_shards):
        table = storage.read_parquet(url)
        bucket = [buckets[zlib.crc32(doc_id.encode()) % 3] for doc_id in table.column("id").to_pylist()]
        table = table.set_column(table.schema.get_field_index("quality_bucket"), "quality_bucket", pa.array(bucket))
        scores = pa.array([0.9 if b == "head" else 0.5 if b == "middle" else 0.1 for b in bucket], pa.float32())
        table = table.set_column(table.schema.get_field_index("quality_score"), "quality_score", scores)
        rebucketed.append(str(tmp_path / f"shard-{index}.parquet"))
        storage.write_parquet(rebucketed[-1], table)
    bucket_of = {
        row["id"]: row["quality_bucket"] for url in rebucketed for row in storage.read_parquet(url).to_pylist()
    }
    for apart in (True, False):
        stage = TokenizeStage(PACK.model_copy(update={"by_quality_bucket": apart}), artifacts)
        jobs = plan_shards("tokenize", rebucketed, str(tmp_path / f"tokens-{apart}"), "h")
        mixed = 0
        for job in jobs:
            run_shard(job, stage, expands_rows=True)
            for row in storage.read_parquet(job.data_url).to_pylist():
                held = {bucket_of[doc_id] for doc_id in row["doc_ids"]}
                assert row["quality_bucket"] in held
                assert row["quality_score"] == pytest.approx(
                    {"head": 0.9, "middle": 0.5, "tail": 0.1}[row["quality_bucket"]]
                )
                mixed += len(held) > 1
        assert (mixed == 0) if apart else mixed > 0
