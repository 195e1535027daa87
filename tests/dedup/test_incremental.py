"""Incremental dedup: a build matched against an earlier build's index (its texts and sketches, not recomputed)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pretrain_core import storage
from pretrain_core.dedup.config import DedupConfig
from pretrain_core.dedup.partitioned import EXACT_DUPLICATE, NEAR_DUPLICATE
from pretrain_core.dedup.stage import fit_dedup, read_clusters

Doc = tuple[str, str, str]


@pytest.fixture(scope="module")
def builds(
    licence: Callable[[str], str], tutor: Callable[[str], str], edit_words: Callable[..., str]
) -> list[list[Doc]]:
    """Three builds of a corpus: the second repeats, rewords and adds to the first; the third repeats the first."""
    first = [(f"one {name}", licence(name), "general") for name in ("GPL-2", "Apache-2.0", "BSD", "Artistic")]
    first.append(("one zh", tutor("zh_cn"), "general"))
    second = [
        ("two GPL-2 copy", licence("GPL-2"), "general"),  # exact copy of an earlier document
        ("two Apache reworded", edit_words(licence("Apache-2.0"), 0.03, donor=licence("MPL-2.0")), "general"),
        ("two MPL", licence("MPL-2.0"), "general"),  # new
        ("two MPL again", licence("MPL-2.0"), "general"),  # a duplicate within this build
        ("two CC0", licence("CC0-1.0"), "general"),  # new
    ]
    third = [
        ("three BSD copy", licence("BSD"), "general"),
        ("three MPL reflowed", " ".join(licence("MPL-2.0").split()), "general"),
    ]
    return [first, second, third]


def _fit(docs: list[Doc], write: Callable[..., list[str]], root: Path, **settings: object) -> dict[str, str]:
    urls = write(docs, shards=2, root=str(root / "clean"))
    return fit_dedup(urls, DedupConfig(**{"partitions": 3, **settings}), str(root / "fit"))


def test_a_build_drops_what_an_earlier_build_holds_naming_the_earlier_document(
    builds: list[list[Doc]], write_clean_shards: Callable[..., list[str]], tmp_path: Path
) -> None:
    first = _fit(builds[0], write_clean_shards, tmp_path / "a")
    second = _fit(builds[1], write_clean_shards, tmp_path / "b", previous_index=first["index"])
    rows = {row["id"]: row for row in read_clusters(second["clusters"]).to_pylist()}
    assert set(rows) == {doc_id for doc_id, _, _ in builds[1]}  # only this build's documents
    assert (rows["two GPL-2 copy"]["dup_cluster"], rows["two GPL-2 copy"]["drop_reason"]) == (
        "one GPL-2",
        EXACT_DUPLICATE,
    )
    reworded = rows["two Apache reworded"]
    assert (reworded["dup_cluster"], reworded["drop_reason"]) == ("one Apache-2.0", NEAR_DUPLICATE)
    assert rows["two MPL"]["drop_reason"] is None and rows["two CC0"]["drop_reason"] is None
    assert rows["two MPL again"]["dup_cluster"] == "two MPL"
    summary = storage.read_json(second["summary"])
    assert summary["earlier_texts"] == len(builds[0]) and summary["duplicates_of_earlier"] == 2
    assert summary["documents"] == len(builds[1])

    # The second build's index holds both builds: a third build matches texts of either.
    third = _fit(builds[2], write_clean_shards, tmp_path / "c", previous_index=second["index"])
    rows = {row["id"]: row for row in read_clusters(third["clusters"]).to_pylist()}
    assert rows["three BSD copy"]["dup_cluster"] == "one BSD"
    assert rows["three MPL reflowed"]["dup_cluster"] in {"two MPL", "two MPL again"}
    assert storage.read_json(third["summary"])["duplicates_of_earlier"] == 2


def test_an_index_built_another_way_is_refused_in_one_line(
    builds: list[list[Doc]], write_clean_shards: Callable[..., list[str]], tmp_path: Path
) -> None:
    first = _fit(builds[0], write_clean_shards, tmp_path / "a")
    with pytest.raises(ValueError, match="built with other num_perm, partitions"):
        _fit(builds[1], write_clean_shards, tmp_path / "b", previous_index=first["index"], num_perm=64, partitions=2)
    with pytest.raises(ValueError, match="no index at"):
        _fit(builds[1], write_clean_shards, tmp_path / "c", previous_index=str(tmp_path / "nowhere.json"))
