from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest

from pretrain_core import storage
from pretrain_core.tokenize.config import PackConfig
from pretrain_core.tokenize.splits import assign_splits, fit_splits, heldout_counts


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


def test_fit_splits_writes_one_sorted_row_per_document(tmp_path: Path, documents: list[dict[str, str]]) -> None:
    ids, domains = [d["id"] for d in documents], [d["domain"] for d in documents]
    shard = pa.table({"id": ids + ids[:5], "domain": domains + domains[:5]})  # five copies: one document each
    storage.write_parquet(str(tmp_path / "part-0.parquet"), shard)
    artifacts = fit_splits([str(tmp_path / "part-0.parquet")], PackConfig(), str(tmp_path / "artifacts"))
    assigned = storage.read_parquet(artifacts["splits"])
    assert assigned.column("id").to_pylist() == sorted(ids)
    split_of = dict(zip(assigned.column("id").to_pylist(), assigned.column("split").to_pylist(), strict=True))
    assert split_of == dict(zip(ids, assign_splits(ids, domains, PackConfig()), strict=True))
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
