"""The partitioned reduce gives what one process clustering every document at once gives (the oracle below: the
in-memory clustering of `near.near_duplicate_roots`), for every method and setting, whatever the number of parts."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from pretrain_core import storage
from pretrain_core.dedup import kernels
from pretrain_core.dedup.config import DedupConfig
from pretrain_core.dedup.exact import exact_key
from pretrain_core.dedup.near import sketch_texts
from pretrain_core.dedup.normalize import CodePoints, normalize_text
from pretrain_core.dedup.partitioned import (
    CLUSTERS,
    EXACT_DUPLICATE,
    NEAR_DUPLICATE,
    PartitionedReduce,
    Shuffle,
    _reachable,
    part_of,
)
from pretrain_core.dedup.stage import fit_dedup, read_clusters, representative_rank, sketch_shard
from tests.dedup.oracle import near_duplicate_roots

Doc = tuple[str, str, str]


@pytest.fixture(scope="module")
def families(licence: Callable[[str], str], tutor: Callable[[str], str], edit_words: Callable[..., str]) -> list[Doc]:
    """Chains of successive rewordings (their ends share less than the threshold), a family of copies larger
    than a small `full_pairs_limit`, exact copies in two domains, reflowed copies and unrelated documents."""
    docs: list[Doc] = []
    for name in ("GPL-2", "Apache-2.0"):
        text = licence(name)
        for step in range(6):
            docs.append((f"{name} step {step}", text, "general"))
            text = edit_words(text, 0.06, donor=licence("MPL-2.0"), seed=step)
    bsd = licence("BSD")
    docs += [(f"BSD copy {i}", edit_words(bsd, 0.01, donor=bsd, seed=i), "general") for i in range(7)]
    docs += [
        ("BSD exact", bsd, "code"),
        ("BSD exact again", bsd, "general"),
        ("BSD reflowed", " ".join(bsd.split()), "general"),
    ]
    docs += [(name, licence(name), "general") for name in ("Artistic", "CC0-1.0", "GPL-1", "LGPL-2.1")]
    docs += [("zh_cn", tutor("zh_cn"), "general"), ("zh_tw", tutor("zh_tw"), "general"), ("zh", tutor("zh"), "general")]
    return docs


def oracle(docs: list[Doc], cfg: DedupConfig) -> pa.Table:
    """Every document's row, clustered in one process over all documents (the reduce before it was partitioned)."""
    keys, groups, first_texts, text_of_doc, index = [], [], [], [], {}
    for doc_id, text, domain in docs:
        normalized = normalize_text(text, cfg.ignore)
        namespace = domain if cfg.scope == "domain" else ""
        key = exact_key(normalized.encode(), text, namespace) if cfg.exact else doc_id.encode()
        if key not in index:
            index[key] = len(index)
            first_texts.append(normalized)
            groups.append(namespace)
        text_of_doc.append(index[key])
        keys.append(key)
    ids = [doc_id for doc_id, _, _ in docs]
    rank = representative_rank(ids, np.array([len(t) for _, t, _ in docs]), cfg.representative)
    doc_of_text = np.array(text_of_doc)
    text_rank = np.full(len(index), len(docs), dtype=np.int64)
    np.minimum.at(text_rank, doc_of_text, rank)
    roots = np.arange(len(index))
    if cfg.method != "none":
        _, group_ids = np.unique(np.array(groups, dtype=str), return_inverse=True)
        roots = near_duplicate_roots(sketch_texts(CodePoints.of(first_texts), cfg), text_rank, group_ids, cfg).roots
    representative = np.argsort(rank)[text_rank[roots[doc_of_text]]]
    sizes = np.bincount(representative, minlength=len(docs))[representative]
    rows = []
    for doc, rep in enumerate(representative.tolist()):
        same = text_of_doc[doc] == text_of_doc[rep]
        reason = None if doc == rep else EXACT_DUPLICATE if same else NEAR_DUPLICATE
        rows.append(
            {"id": ids[doc], "dup_cluster": ids[rep], "dup_cluster_size": int(sizes[doc]), "drop_reason": reason}
        )
    return pa.Table.from_pylist(rows, schema=CLUSTERS).sort_by("id")


SETTINGS: list[dict[str, Any]] = [
    {},
    {"full_pairs_limit": 3, "representative": "smallest_id"},
    {"threshold": 0.7, "guard_margin": 0.1},
    {"verify_with": "sketch", "scope": "domain"},
    {"method": "simhash", "simhash_max_hamming": 6},
    {"method": "simhash", "verify_with": "sketch", "simhash_max_hamming": 8},
    {"method": "none"},
    {"exact": False},
]


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()) or "default")
def test_partitioned_reduce_equals_clustering_everything_at_once(
    settings: dict[str, Any], families: list[Doc], write_clean_shards: Callable[..., list[str]], tmp_path: Path
) -> None:
    urls = write_clean_shards(families, shards=3)
    expected = oracle(families, DedupConfig(**settings))
    for parts, fan_in in ((1, 64), (4, 64), (9, 2)):  # fan-in 2: every shuffle through a merge round
        cfg = DedupConfig(**settings, partitions=parts, shuffle_fan_in=fan_in)
        artifacts = fit_dedup(urls, cfg, str(tmp_path / f"fit-{parts}"))
        assert read_clusters(artifacts["clusters"]).equals(expected), parts
        for shard, clusters in storage.read_json(artifacts["clusters"]).items():  # each shard's rows in its file
            shard_ids = sorted(storage.read_parquet(shard, columns=["id"]).column("id").to_pylist())
            assert storage.read_parquet(clusters, columns=["id"]).column("id").to_pylist() == shard_ids
        summary = storage.read_json(artifacts["summary"])
        assert summary["documents"] == len(families) and summary["partitions"] == parts
    dropped = [r for r in expected.to_pylist() if r["drop_reason"]]
    if settings.get("method") != "none" and settings.get("exact", True):
        assert any(r["drop_reason"] == NEAR_DUPLICATE for r in dropped)  # the families have something to find


def test_the_chains_are_guarded_and_counted(
    families: list[Doc], write_clean_shards: Callable[..., list[str]], tmp_path: Path
) -> None:
    """Successive rewordings link into one component; the guard splits it so nothing is dropped below the
    threshold, and the summary counts the splits and pairs the same for any number of parts."""
    urls = write_clean_shards(families, shards=2)
    summaries = [
        storage.read_json(fit_dedup(urls, DedupConfig(partitions=p), str(tmp_path / f"p{p}"))["summary"])
        for p in (1, 5)
    ]
    assert summaries[0] == {**summaries[1], "partitions": 1}
    assert summaries[0]["guard_splits"] >= 1 and summaries[0]["near_below_threshold"] == 0
    assert summaries[0]["verified_pairs"] <= summaries[0]["candidate_pairs"]


@pytest.mark.parametrize("fan_in", [64, 2])
def test_reduce_resumes_job_by_job(
    fan_in: int, families: list[Doc], write_clean_shards: Callable[..., list[str]], tmp_path: Path
) -> None:
    """Jobs already marked done are not run again; a reduce stopped half-way finishes with the same result, with
    one-level shuffles and through merge rounds."""
    urls = write_clean_shards(families, shards=3)
    cfg = DedupConfig(partitions=3, shuffle_fan_in=fan_in)
    partials = [str(tmp_path / "partials" / f"{i}") for i in range(len(urls))]
    for url, partial in zip(urls, partials, strict=True):
        sketch_shard(url, cfg, partial)
    reduce = PartitionedReduce(tuple(partials), cfg, str(tmp_path / "fit"))
    rounds_seen = []
    while jobs := reduce.next_jobs():
        rounds_seen.append(jobs[0].round)
        reduce.run(jobs[0])  # one job at a time, as if the run stopped after each
    assert rounds_seen[-1] == "by_shard" and any(r.startswith("min_") for r in rounds_seen)
    merges = [r for r in rounds_seen if r.startswith("merge_")]
    if fan_in == 2:
        assert list(dict.fromkeys(rounds_seen))[:3] == ["merge_keys", "merge_ids", "texts"]
        assert {"merge_bands", "merge_edges", "merge_roots", "merge_assembled", "merge_messages_0"} <= set(merges)
    else:
        assert rounds_seen[0] == "texts" and not merges
    resumed = read_clusters(reduce.finish(urls)["clusters"])
    assert resumed.equals(read_clusters(fit_dedup(urls, cfg, str(tmp_path / "again"))["clusters"]))
    assert reduce.seconds() > 0


def test_parts_are_even_and_stable() -> None:
    keys = [i.to_bytes(16, "little") for i in range(4000)]
    parts = part_of(keys, 8)
    assert parts.tolist() == part_of(keys, 8).tolist() and set(parts.tolist()) == set(range(8))
    assert np.bincount(parts).min() > 400
    assert not part_of(keys, 1).any()


@pytest.mark.parametrize(("senders", "receivers"), [(3, 9), (65, 64), (100, 7), (3_000, 3_000), (50_000, 3_000)])
def test_a_two_level_shuffle_reads_about_2_r_sqrt_s_row_groups_and_holds_one_part(senders: int, receivers: int) -> None:
    """A merge job holds at most a receiver's share (block x group <= senders: each sender holds 1/senders of the
    table and each receiver 1/receivers of a sender's rows), and the merge and receiving reads together are
    about 2 x receivers x sqrt(senders), against senders x receivers in one level."""
    shuffle = Shuffle("t", tuple(f"s{i}" for i in range(senders)), receivers, fan_in=2)
    assert shuffle.levels is not None
    block, group = shuffle.levels
    blocks, groups = shuffle.merge_jobs()
    assert block * group <= senders and block <= receivers
    assert (blocks - 1) * block < receivers <= blocks * block and (groups - 1) * group < senders <= groups * group
    merge_reads = blocks * senders  # each merge job reads its block from each sender of its group
    receiving_reads = receivers * groups
    one_level = senders * receivers
    assert merge_reads + receiving_reads <= 3 * receivers * np.sqrt(senders) + 2 * senders
    if senders >= 3_000:
        assert one_level / (merge_reads + receiving_reads) > 15
    assert Shuffle("t", shuffle.senders, receivers, fan_in=senders).levels is None
    if senders * receivers > 10**7:
        return  # the pair coverage below is checked on the smaller shapes
    covered = np.zeros((receivers, senders), dtype=np.int8)  # the merge jobs cover each pair exactly once
    for index in range(blocks * groups):
        job_receivers, job_senders = shuffle.merge_job(index)
        assert len(job_receivers) <= block and len(job_senders) <= group
        covered[job_receivers.start : job_receivers.stop, job_senders.start : job_senders.stop] += 1
    assert (covered == 1).all()


def test_pairs_dropped_by_their_set_sizes_could_not_reach_the_threshold() -> None:
    """The size bound drops only pairs whose exact Jaccard is below the threshold, including at the boundary (two
    empty sets have Jaccard 0, as `kernels.pair_jaccard` counts them)."""
    assert _reachable(np.array([[4, 5], [5, 4], [79, 100], [0, 0]]), 0.8).tolist() == [True, True, False, False]
    rng = np.random.default_rng(7)
    order = rng.permutation(1000).astype(np.uint64)
    nested = [np.sort(order[:n]) for n in rng.integers(1, 300, size=150)]  # Jaccard exactly the size ratio
    scattered = [np.unique(rng.integers(0, 400, size=int(n))).astype(np.uint64) for n in rng.integers(1, 300, size=150)]
    sets = nested + scattered
    hashes = np.concatenate(sets)
    offsets = np.concatenate(([0], np.cumsum([len(s) for s in sets]))).astype(np.int64)
    left, right = rng.integers(0, len(sets), size=(2, 5000))
    jaccard = kernels.pair_jaccard(hashes, offsets, hashes, offsets, left, right)
    sizes = np.diff(offsets)
    reachable = _reachable(np.stack((sizes[left], sizes[right]), axis=1), 0.5)
    assert not np.any(jaccard[~reachable] >= 0.5)
    assert np.count_nonzero(~reachable) > 1000 and np.count_nonzero(jaccard >= 0.5) > 50  # both sides exercised
