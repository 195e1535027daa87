import pickle
from collections import Counter
from itertools import pairwise
from pathlib import Path

import pytest

from pretrain_core import storage
from pretrain_core.card.stats import TOKENS_BY_LICENCE
from pretrain_core.mixture.config import MixtureConfig
from pretrain_core.mixture.plan import fit_mixture, plan_rows
from pretrain_core.mixture.stage import NOT_SAMPLED, MixtureStage
from pretrain_core.schema import MIXTURE
from pretrain_core.stage import plan_shards, run_shard
from pretrain_core.tokenize.encode import encode_texts, load_tokenizer


@pytest.fixture(scope="module")
def artifacts(
    quality_shards: list[str], tokenizer_url: str, splits_url: str, tmp_path_factory: pytest.TempPathFactory
) -> dict:
    cfg = MixtureConfig(total_tokens=200_000)
    return fit_mixture(quality_shards, cfg, tokenizer_url, splits_url, 2, str(tmp_path_factory.mktemp("mixture")))


def test_each_document_is_emitted_as_often_as_planned(quality_shards: list[str], artifacts: dict) -> None:
    plan = plan_rows(artifacts).to_pylist()
    repeats = {row["id"]: row["repeats"] for row in plan}
    n_tokens = {row["id"]: row["n_tokens"] for row in plan}
    stage = pickle.loads(pickle.dumps(MixtureStage(MixtureConfig(), artifacts)))  # shipped to workers
    table = storage.read_parquet(quality_shards[0])
    output = stage.process(table)
    kept = output.kept.to_pylist()
    copies = Counter(row["id"] for row in kept)
    assert copies == Counter({i: repeats[i] for i in table["id"].to_pylist() if repeats[i]})
    heldout = {row["id"] for row in plan if row["split"] != "train"} & set(table["id"].to_pylist())
    assert heldout and all(copies[i] == 1 for i in heldout)  # evaluation sets do not depend on the weights
    assert all(row["n_tokens"] == n_tokens[row["id"]] for row in kept)
    indices: dict[str, list[int]] = {}
    for row in kept:
        indices.setdefault(row["id"], []).append(row["repeat_index"])
    assert all(found == list(range(repeats[i])) for i, found in indices.items())
    dropped = output.dropped.to_pylist()
    assert {row["id"] for row in dropped} == {i for i in table["id"].to_pylist() if repeats[i] == 0}
    assert {row["drop_reason"] for row in dropped} == {NOT_SAMPLED}


def test_copies_are_never_neighbours(quality_shards: list[str], artifacts: dict) -> None:
    output = MixtureStage(MixtureConfig(), artifacts).process(storage.read_parquet(quality_shards[1]))
    ids = output.kept["id"].to_pylist()
    assert len(ids) > len(set(ids))  # something is up-sampled
    assert all(a != b for a, b in pairwise(ids))


def test_shard_stats_add_up_to_the_plan(quality_shards: list[str], artifacts: dict, tmp_path: Path) -> None:
    stage = MixtureStage(MixtureConfig(), artifacts)
    records = [
        run_shard(job, stage, expands_rows=True) for job in plan_shards("mixture", quality_shards, str(tmp_path), "h")
    ]
    plan = plan_rows(artifacts).to_pylist()
    for domain in ("general", "specialist", "code"):
        planned = sum(row["n_tokens"] * row["repeats"] for row in plan if row["domain"] == domain)
        assert sum(r.stats.get(f"tokens_{domain}", 0) for r in records) == planned
    written = [storage.read_parquet(job.data_url) for job in plan_shards("mixture", quality_shards, str(tmp_path), "h")]
    assert all(t.schema.equals(MIXTURE) for t in written)
    by_licence: Counter[str] = Counter()  # each licence's realised tokens, copies counted
    for table in written:
        for licence, tokens in zip(table["licence"].to_pylist(), table["n_tokens"].to_pylist(), strict=True):
            by_licence[licence] += tokens
    stated = {key.split("/", 1)[1] for r in records for key in r.stats if key.startswith(TOKENS_BY_LICENCE)}
    assert stated == set(by_licence) and len(stated) == 3
    for licence, tokens in by_licence.items():
        assert sum(r.stats.get(f"{TOKENS_BY_LICENCE}/{licence}", 0) for r in records) == tokens
    assert sum(r.docs_out for r in records) == sum(row["repeats"] for row in plan)
    summary = storage.read_json(artifacts["mixture_summary"])
    assert sum(r.dropped.get(NOT_SAMPLED, 0) for r in records) == sum(
        d["documents"] - d["documents_used"] for d in summary["domains"].values()
    )


def test_a_document_missing_from_the_plan_is_an_error(
    quality_shards: list[str], tokenizer_url: str, splits_url: str, tmp_path: Path
) -> None:
    other = fit_mixture(quality_shards[:1], MixtureConfig(), tokenizer_url, splits_url, 2, str(tmp_path))
    with pytest.raises(ValueError, match="not in the plan"):
        MixtureStage(MixtureConfig(), other).process(storage.read_parquet(quality_shards[1]))


def test_first_copies_carry_the_ids_the_count_encoded(
    quality_shards: list[str], artifacts: dict, tokenizer_url: str
) -> None:
    """The ids travel with each document's first copy (tokenization reuses them); further copies and the
    quarantine carry none."""
    tokenizer = load_tokenizer(tokenizer_url)
    output = MixtureStage(MixtureConfig(), artifacts).process(storage.read_parquet(quality_shards[1]))
    kept = output.kept.to_pylist()
    first = [row for row in kept if row["repeat_index"] == 0]
    assert first and len(first) < len(kept)
    assert all(row["token_ids"] == encode_texts(tokenizer, [row["text"]])[0] for row in first)
    assert all(len(row["token_ids"]) == row["n_tokens"] for row in first)
    assert all(row["token_ids"] is None for row in kept if row["repeat_index"] > 0)
    assert output.dropped.num_rows and output.dropped["token_ids"].null_count == output.dropped.num_rows
