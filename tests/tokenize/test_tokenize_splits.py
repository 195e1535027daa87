from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest

from pretrain_core import storage
from pretrain_core.tokenize.config import PackConfig
from pretrain_core.tokenize.splits import assign_splits, fit_splits, heldout_counts, load_boundaries


@pytest.mark.parametrize(
    ("n_docs", "expected"), [(0, (0, 0)), (1, (0, 0)), (2, (1, 0)), (3, (1, 1)), (5, (2, 2)), (1000, (20, 20))]
)
def test_heldout_counts_have_a_floor_and_leave_training_data(n_docs: int, expected: tuple[int, int]) -> None:
    assert heldout_counts(n_docs, PackConfig(min_heldout_docs=2)) == expected


def test_zero_fraction_means_no_heldout_documents() -> None:
    assert heldout_counts(500, PackConfig(validation_fraction=0.0, test_fraction=0.1)) == (0, 50)


def test_every_domain_is_held_out_and_assignment_ignores_order(documents: list[dict[str, str]]) -> None:
    cfg = PackConfig(min_heldout_docs=3)
    ids, domains = [d["id"] for d in documents], [d["domain"] for d in documents]
    splits = assign_splits(ids, domains, cfg)
    per_domain = Counter(zip(domains, splits, strict=True))
    for domain in set(domains):
        assert per_domain[(domain, "validation")] == per_domain[(domain, "test")] == 3
    reversed_splits = assign_splits(ids[::-1], domains[::-1], cfg)
    assert dict(zip(ids[::-1], reversed_splits, strict=True)) == dict(zip(ids, splits, strict=True))
    assert assign_splits(ids, domains, cfg.model_copy(update={"split_seed": 1})) != splits


def test_assignment_is_pinned_for_a_seed() -> None:
    """Ids -> split is a function of id, domain, the domain's size and the seed: the same documents keep their
    splits whatever runs the assignment (it moved from the mixture's output to its input)."""
    ids = [f"doc-{i:03d}" for i in range(60)]
    domains = ["general"] * 40 + ["specialist"] * 15 + ["code"] * 5
    cfg = PackConfig(validation_fraction=0.05, test_fraction=0.05, min_heldout_docs=2)
    held_out = {
        split: [i for i, s in zip(ids, assign_splits(ids, domains, cfg), strict=True) if s == split]
        for split in ("validation", "test")
    }
    assert held_out == {
        "validation": ["doc-012", "doc-032", "doc-041", "doc-050", "doc-055", "doc-056"],
        "test": ["doc-000", "doc-019", "doc-040", "doc-051", "doc-057", "doc-058"],
    }


def test_the_streamed_fit_assigns_what_ranking_all_documents_at_once_does(
    tmp_path: Path, documents: list[dict[str, str]]
) -> None:
    """The fit keeps two boundaries per domain, never every id; the splits they give are `assign_splits`'s, with
    the shards in any layout and copies of a document in a shard counted once."""
    ids, domains = [d["id"] for d in documents], [d["domain"] for d in documents]
    urls = []
    for part, rows in enumerate((slice(0, 17), slice(17, None))):
        shard = pa.table({"id": ids[rows] + ids[rows][:3], "domain": domains[rows] + domains[rows][:3]})  # copies
        urls.append(str(tmp_path / f"part-{part}.parquet"))
        storage.write_parquet(urls[-1], shard)
    artifacts = fit_splits(urls, PackConfig(), str(tmp_path / "artifacts"))
    split_of = dict(zip(ids, load_boundaries(artifacts["splits"]).split_of(ids, domains), strict=True))
    assert split_of == dict(zip(ids, assign_splits(ids, domains, PackConfig()), strict=True))
    assert {"validation", "test"} <= set(split_of.values())
    summary = storage.read_json(artifacts["splits_summary"])
    assert summary == {
        domain: {
            split: sum(d == domain and split_of[i] == split for i, d in zip(ids, domains, strict=True))
            for split in ("train", "validation", "test")
        }
        for domain in sorted(set(domains))
    }


def test_an_id_in_two_domains_is_refused(tmp_path: Path) -> None:
    storage.write_parquet(str(tmp_path / "part-0.parquet"), pa.table({"id": ["a", "a"], "domain": ["code", "general"]}))
    with pytest.raises(ValueError, match="two domains"):
        fit_splits([str(tmp_path / "part-0.parquet")], PackConfig(), str(tmp_path / "artifacts"))


def test_a_documents_split_depends_on_its_id_and_domain_only(tmp_path: Path, documents: list[dict[str, str]]) -> None:
    """So every shard of the mixture and tokenize stages can work it out alone."""
    ids, domains = [d["id"] for d in documents], [d["domain"] for d in documents]
    storage.write_parquet(str(tmp_path / "part-0.parquet"), pa.table({"id": ids, "domain": domains}))
    boundaries = load_boundaries(fit_splits([str(tmp_path / "part-0.parquet")], PackConfig(), str(tmp_path))["splits"])
    together = boundaries.split_of(ids, domains).tolist()
    assert together == [boundaries.split_of([i], [d])[0] for i, d in zip(ids, domains, strict=True)]
    assert boundaries.split_of(ids[::-1], domains[::-1]).tolist() == together[::-1]
