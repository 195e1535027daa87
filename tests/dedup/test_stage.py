from __future__ import annotations

import pickle
import random
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pretrain_core import schema, storage
from pretrain_core.dedup.config import DedupConfig
from pretrain_core.dedup.normalize import CodePoints, normalize_text
from pretrain_core.dedup.shingles import shingle_sets
from pretrain_core.dedup.stage import DedupStage, fit_dedup, read_clusters
from pretrain_core.stage import plan_shards, run_shard

LICENCES = ["Apache-2.0", "Artistic", "BSD", "CC0-1.0", "GPL-1", "GPL-2", "GPL-3", "LGPL-2", "LGPL-2.1", "MPL-2.0"]
PAGES = ["md5sum", "b2sum", "ls", "cp", "chmod"]
Doc = tuple[str, str, str]


@pytest.fixture(scope="module")
def corpus(
    licence: Callable[[str], str],
    man_page: Callable[[str], str],
    tutor: Callable[[str], str],
    edit_words: Callable[..., str],
    edit_chars: Callable[..., str],
) -> list[Doc]:
    """Real documents plus the duplicates a crawl produces: a reflowed copy, reworded copies, a re-encoded file."""
    docs = [(name, licence(name), "general") for name in LICENCES]
    docs += [(page, man_page(page), "specialist") for page in PAGES]
    docs += [("zh_cn", tutor("zh_cn"), "general"), ("zh_tw", tutor("zh_tw"), "general")]
    docs += [
        ("GPL-3 reflowed", " ".join(licence("GPL-3").split()), "general"),  # shorter: the original is kept
        ("GPL-2 reworded", edit_words(licence("GPL-2"), 0.07, donor=licence("Apache-2.0")), "general"),
        ("zh_cn reworded", edit_chars(tutor("zh_cn"), 0.05, donor=tutor("ja"), run=20), "general"),
        ("zh copy", tutor("zh"), "general"),  # vim ships the traditional tutor twice
    ]
    return docs


def _fit(write: Callable[..., list[str]], docs: list[Doc], tmp: Path, shards: int = 2, **cfg: Any) -> list[str]:
    urls = write(docs, shards=shards)
    fit_dedup(urls, DedupConfig(**cfg), str(tmp / "artifacts"))
    return urls


def _clusters(tmp: Path) -> dict[str, dict[str, Any]]:
    table = read_clusters(str(tmp / "artifacts" / "clusters.json"))
    return {row["id"]: row for row in table.to_pylist()}


def test_stage_keeps_one_document_per_cluster_and_counts_add_up(
    tmp_path: Path, write_clean_shards: Callable[..., list[str]], corpus: list[Doc]
) -> None:
    urls = write_clean_shards(corpus, shards=3)
    artifacts = fit_dedup(urls, DedupConfig(), str(tmp_path / "artifacts"))
    assert set(artifacts) == {"clusters", "summary", "index"}
    stage = DedupStage(DedupConfig(), artifacts)
    jobs = plan_shards("dedup", urls, str(tmp_path / "dedup"), "h")
    records = [run_shard(job, stage) for job in jobs]

    kept = pa.concat_tables(storage.read_parquet(job.data_url) for job in jobs)
    dropped = pa.concat_tables(storage.read_parquet(job.dropped_url) for job in jobs)
    assert kept.schema == schema.DEDUP and dropped.schema == schema.dropped_schema(schema.DEDUP)
    reasons = dict(zip(dropped.column("id").to_pylist(), dropped.column("drop_reason").to_pylist(), strict=True))
    cluster_of = dict(zip(dropped.column("id").to_pylist(), dropped.column("dup_cluster").to_pylist(), strict=True))
    assert reasons["GPL-3 reflowed"] == "exact_duplicate" and cluster_of["GPL-3 reflowed"] == "GPL-3"
    assert reasons["zh_tw"] == "exact_duplicate" and cluster_of["zh_tw"] == "zh copy"  # equal length: smaller id
    assert {reasons.get("GPL-2"), reasons.get("GPL-2 reworded")} == {None, "near_duplicate"}
    assert {reasons.get("zh_cn"), reasons.get("zh_cn reworded")} == {None, "near_duplicate"}
    assert len(reasons) == 4  # same-template pairs (md5sum/b2sum, LGPL-2/2.1, GPL-1/2) all survive

    kept_ids = kept.column("id").to_pylist()
    assert all(c == i for i, c in zip(kept_ids, kept.column("dup_cluster").to_pylist(), strict=True))
    assert set(cluster_of.values()) <= set(kept_ids)
    sizes = Counter(kept.column("dup_cluster").to_pylist() + dropped.column("dup_cluster").to_pylist())
    for table in (kept, dropped):
        for row in table.select(["dup_cluster", "dup_cluster_size"]).to_pylist():
            assert row["dup_cluster_size"] == sizes[row["dup_cluster"]]

    summary = storage.read_json(artifacts["summary"])
    assert sum(r.docs_in for r in records) == len(corpus) == summary["documents"]
    assert all(r.docs_in == r.docs_out + sum(r.dropped.values()) for r in records)
    assert sum(r.stats["exact_duplicates"] for r in records) == summary["exact_duplicates"] == 2
    assert sum(r.stats["near_duplicates"] for r in records) == summary["near_duplicates"] == 2
    assert sum(r.stats["clusters"] for r in records) == summary["clusters"] == 4
    assert max(r.stats["largest_cluster"] for r in records) == summary["largest_cluster"] == 2


def test_clusters_are_identical_bytes_whatever_the_input_order(
    tmp_path: Path, write_clean_shards: Callable[..., list[str]], corpus: list[Doc]
) -> None:
    shuffled = corpus.copy()
    random.Random(3).shuffle(shuffled)
    first = fit_dedup(write_clean_shards(corpus, 2, str(tmp_path / "a")), DedupConfig(), str(tmp_path / "fa"))
    second = fit_dedup(write_clean_shards(shuffled, 5, str(tmp_path / "b")), DedupConfig(), str(tmp_path / "fb"))
    assert read_clusters(first["clusters"]).equals(read_clusters(second["clusters"]))
    assert storage.read_bytes(first["summary"]) == storage.read_bytes(second["summary"])
    ids = read_clusters(first["clusters"]).column("id").to_pylist()
    assert ids == sorted(ids) and len(ids) == len(corpus)


def test_representative_rule(
    tmp_path: Path, write_clean_shards: Callable[..., list[str]], licence: Callable[[str], str]
) -> None:
    bsd = licence("BSD")
    docs = [("a", " ".join(bsd.split()), "general"), ("b", bsd, "general"), ("c", bsd.replace("\n", "\n\n"), "code")]
    _fit(write_clean_shards, docs, tmp_path)
    assert {i: r["dup_cluster"] for i, r in _clusters(tmp_path).items()} == {"a": "c", "b": "c", "c": "c"}
    _fit(write_clean_shards, docs, tmp_path, representative="smallest_id")
    assert {i: r["dup_cluster"] for i, r in _clusters(tmp_path).items()} == {"a": "a", "b": "a", "c": "a"}


def test_exact_only_and_near_only(
    tmp_path: Path, write_clean_shards: Callable[..., list[str]], corpus: list[Doc]
) -> None:
    _fit(write_clean_shards, corpus, tmp_path, method="none")
    reasons = Counter(row["drop_reason"] for row in _clusters(tmp_path).values())
    assert reasons == Counter({None: len(corpus) - 2, "exact_duplicate": 2})
    _fit(write_clean_shards, corpus, tmp_path, exact=False)
    reasons = Counter(row["drop_reason"] for row in _clusters(tmp_path).values())
    assert reasons == Counter({None: len(corpus) - 4, "near_duplicate": 4})  # copies found as Jaccard 1.0


def test_punctuation_sensitive_dedup_is_an_option(
    tmp_path: Path, write_clean_shards: Callable[..., list[str]], licence: Callable[[str], str]
) -> None:
    bsd = licence("BSD")
    docs = [("a", bsd, "general"), ("b", bsd.replace(",", ";"), "general"), ("c", bsd.upper(), "general")]
    _fit(write_clean_shards, docs, tmp_path)
    assert [r["drop_reason"] for r in _clusters(tmp_path).values()] == [None, "exact_duplicate", "exact_duplicate"]
    _fit(write_clean_shards, docs, tmp_path, ignore=["case"], method="none")
    assert [r["drop_reason"] for r in _clusters(tmp_path).values()] == [None, None, "exact_duplicate"]


def test_domain_scope_keeps_a_copy_per_domain(
    tmp_path: Path, write_clean_shards: Callable[..., list[str]], licence: Callable[[str], str]
) -> None:
    bsd = licence("BSD")
    docs = [("a", bsd, "general"), ("b", bsd, "code"), ("c", bsd.upper(), "code")]
    _fit(write_clean_shards, docs, tmp_path, scope="domain")
    clusters = _clusters(tmp_path)
    assert [clusters[i]["drop_reason"] for i in "abc"] == [None, None, "exact_duplicate"]
    _fit(write_clean_shards, docs, tmp_path)
    assert [r["dup_cluster_size"] for r in _clusters(tmp_path).values()] == [3, 3, 3]


def test_simhash_option_finds_copies_and_spares_templates(
    tmp_path: Path, write_clean_shards: Callable[..., list[str]], corpus: list[Doc]
) -> None:
    gpl2 = next(text for doc_id, text, _ in corpus if doc_id == "GPL-2")
    docs = [*corpus, ("GPL-2 fixed", gpl2.replace("warranty", "guarantee", 1), "general")]
    _fit(write_clean_shards, docs, tmp_path, method="simhash", verify_with="sketch")
    clusters = _clusters(tmp_path)
    assert clusters["GPL-2 fixed"]["dup_cluster"] == clusters["GPL-2"]["dup_cluster"]
    assert clusters["GPL-3 reflowed"]["drop_reason"] == "exact_duplicate"
    assert clusters["b2sum"]["dup_cluster"] == "b2sum" and clusters["md5sum"]["dup_cluster"] == "md5sum"
    assert clusters["LGPL-2.1"]["dup_cluster_size"] == 1


def test_unseen_documents_and_repeated_ids_are_errors(
    tmp_path: Path, write_clean_shards: Callable[..., list[str]], corpus: list[Doc]
) -> None:
    urls = _fit(write_clean_shards, corpus[:5], tmp_path)
    stage = DedupStage(DedupConfig(), {"clusters": str(tmp_path / "artifacts" / "clusters.json")})
    later = write_clean_shards(corpus[3:8], 1, str(tmp_path / "later"))
    with pytest.raises(ValueError, match="not seen by fit_dedup"):
        stage.process(storage.read_parquet(later[0]))
    with pytest.raises(ValueError, match="more than once"):
        fit_dedup([*urls, later[0]], DedupConfig(), str(tmp_path / "again"))


def test_stage_pickles_small_and_sees_a_refitted_artifact(
    tmp_path: Path, write_clean_shards: Callable[..., list[str]], corpus: list[Doc]
) -> None:
    urls = _fit(write_clean_shards, corpus, tmp_path)
    stage = DedupStage(DedupConfig(), {"clusters": str(tmp_path / "artifacts" / "clusters.json")})
    shard = pa.concat_tables(storage.read_parquet(url) for url in urls)
    before = stage.process(shard)
    shipped = pickle.dumps(stage)
    assert len(shipped) < 4096 and stage.name == "dedup"
    after = pickle.loads(shipped).process(shard)
    assert after.kept.equals(before.kept) and after.dropped.equals(before.dropped) and after.stats == before.stats
    assert before.dropped.num_rows == 4
    _fit(write_clean_shards, corpus, tmp_path, exact=False, method="none")  # same artifact URL, nothing dropped
    assert stage.process(shard).dropped.num_rows == 0


def test_fit_reads_and_writes_any_fsspec_url(write_clean_shards: Callable[..., list[str]], corpus: list[Doc]) -> None:
    urls = write_clean_shards([*corpus[:6], ("copy", corpus[0][1], "code")], 2, "memory://dedup-test/clean")
    artifacts = fit_dedup(urls, DedupConfig(), "memory://dedup-test/artifacts")
    assert artifacts["clusters"] == "memory://dedup-test/artifacts/clusters.json"
    output = DedupStage(DedupConfig(), artifacts).process(storage.read_parquet(urls[0]))
    assert output.dropped.column("id").to_pylist() == ["copy"] and output.stats["exact_duplicates"] == 1
    assert storage.read_json(artifacts["summary"])["exact_duplicates"] == 1


def test_empty_input_gives_an_empty_artifact(tmp_path: Path, write_clean_shards: Callable[..., list[str]]) -> None:
    urls = write_clean_shards([], shards=1)
    artifacts = fit_dedup(urls, DedupConfig(), str(tmp_path / "artifacts"))
    assert read_clusters(artifacts["clusters"]).num_rows == 0
    output = DedupStage(DedupConfig(), artifacts).process(storage.read_parquet(urls[0]))
    assert output.kept.schema == schema.DEDUP and output.stats["largest_cluster"] == 0


DEMO_SPECIALIST = Path(__file__).resolve().parents[2] / "pretrain_core" / "data" / "demo" / "specialist"


def test_demo_documentation_with_planted_copies(
    tmp_path: Path, write_clean_shards: Callable[..., list[str]], edit_words: Callable[..., str]
) -> None:
    """The demo's Python docs and Debian handbook: planted copies are found, and nothing is dropped that is not
    close to what was kept."""
    if not (DEMO_SPECIALIST / "python_docs.parquet").is_file():
        pytest.skip("demo corpus not built (scripts/build_demo_corpus.py)")
    docs: list[Doc] = []
    for name in ("python_docs", "debian_handbook"):
        table = pq.read_table(DEMO_SPECIALIST / f"{name}.parquet", columns=["id", "text"])
        docs += [
            (i, t, "specialist") for i, t in zip(*(table.column(c).to_pylist() for c in ("id", "text")), strict=True)
        ]
    originals = [doc for doc in docs if len(doc[1].split()) >= 1000][::7][:10]  # long enough for 5% edits
    planted = [(f"{i} copy", " ".join(t.split()), "general") for i, t, _ in originals[:5]]
    planted += [(f"{i} reworded", edit_words(t, 0.05, donor=docs[-1][1]), "general") for i, t, _ in originals[5:]]
    urls = write_clean_shards(docs + planted, shards=3)
    artifacts = fit_dedup(urls, DedupConfig(), str(tmp_path / "artifacts"))
    clusters = {row["id"]: row for row in read_clusters(artifacts["clusters"]).to_pylist()}
    for (original, _, _), (copy, _, _) in zip(originals, planted, strict=True):
        assert clusters[copy]["dup_cluster"] == clusters[original]["dup_cluster"], copy
    dropped = [row for row in clusters.values() if row["drop_reason"]]
    assert len(planted) <= len(dropped) <= len(planted) + 5  # a few untranslated handbook pages at most

    texts = {doc_id: normalize_text(text) for doc_id, text, _ in docs + planted}
    for row in dropped:
        pair = shingle_sets(CodePoints.of([texts[row["id"]], texts[row["dup_cluster"]]]), "auto", 5, 5, 0.3)
        assert pair.jaccard(0, np.array([1]))[0] >= 0.7, row["id"]
