from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from pretrain_core import storage
from pretrain_core.mixture import plan as plan_module
from pretrain_core.mixture.config import MixtureConfig
from pretrain_core.mixture.plan import count_tokens, fit_mixture, plan_repeats, plan_rows
from pretrain_core.tokenize.encode import load_tokenizer
from pretrain_core.tokenize.splits import load_boundaries
from tests.mixture.oracle import repeats_in_memory


@pytest.fixture(scope="module")
def counted(quality_shards: list[str], tokenizer_url: str) -> pa.Table:
    return count_tokens(quality_shards, tokenizer_url, num_threads=1)


def _plan(counted: pa.Table, cfg: MixtureConfig, train: np.ndarray | None = None) -> tuple[np.ndarray, dict]:
    ids = counted.column("id").to_pylist()
    train = np.ones(len(ids), dtype=bool) if train is None else train
    return plan_repeats(ids, counted.column("domain").to_pylist(), counted.column("n_tokens").to_numpy(), train, cfg)


def _shares(tokens: np.ndarray, domains: np.ndarray) -> dict[str, float]:
    total = tokens.sum()
    return {d: float(tokens[domains == d].sum() / total) for d in ("general", "specialist", "code")}


def test_counts_are_the_tokenizer_lengths_sorted_by_id(
    counted: pa.Table, documents: list[dict[str, str]], tokenizer_url: str
) -> None:
    tokenizer = load_tokenizer(tokenizer_url)
    expected = sorted((d["id"], len(tokenizer.encode(d["text"]))) for d in documents)
    assert list(zip(counted.column("id").to_pylist(), counted.column("n_tokens").to_pylist(), strict=True)) == expected


@pytest.mark.parametrize("total_tokens", [None, 150_000, 40_000])
def test_realised_shares_hit_the_weights(counted: pa.Table, total_tokens: int | None) -> None:
    repeats, summary = _plan(counted, MixtureConfig(total_tokens=total_tokens, seed=7))
    tokens = counted.column("n_tokens").to_numpy()
    domains = np.asarray(counted.column("domain").to_pylist())
    realised = {d: int((tokens * repeats)[domains == d].sum()) for d in ("general", "specialist", "code")}
    total = sum(realised.values())
    for domain, weight in {"general": 0.6, "specialist": 0.3, "code": 0.1}.items():
        assert abs(realised[domain] / total - weight) <= 0.005
        assert summary["domains"][domain]["realised_tokens"] == realised[domain]
    assert summary["within_tolerance"]
    assert (
        total <= sum(d["target_tokens"] for d in summary["domains"].values()) <= summary["total_tokens"]["target"] + 3
    )
    assert summary["total_tokens"]["realised"] == total
    assert repeats.max() <= 4


def test_default_budget_is_the_largest_within_the_upsampling_cap(counted: pa.Table) -> None:
    _, summary = _plan(counted, MixtureConfig())
    general = summary["domains"]["general"]  # the smallest domain relative to its 60% weight
    assert general["epochs"] == pytest.approx(4.0, abs=1e-3) and general["max_repeats"] == 4
    assert all(d["epochs"] <= 4.0 for d in summary["domains"].values())
    assert any("'general' is used 4x" in note for note in summary["notes"])


def test_an_unreachable_budget_is_shrunk_and_the_plan_says_why(counted: pa.Table) -> None:
    _, summary = _plan(counted, MixtureConfig(total_tokens=10**9, max_upsample=2.0))
    assert summary["total_tokens"]["target"] == summary["total_tokens"]["ceiling"] < 10**9
    assert any("shrunk" in note and "'general'" in note for note in summary["notes"])
    assert summary["domains"]["general"]["epochs"] == pytest.approx(2.0, abs=1e-3)
    assert summary["within_tolerance"]


def test_subsampling_drops_documents_of_an_overweight_domain(counted: pa.Table) -> None:
    cfg = MixtureConfig(weights={"general": 0.2, "specialist": 0.2, "code": 0.6}, max_upsample=1.0)
    repeats, summary = _plan(counted, cfg)
    domains = np.asarray(counted.column("domain").to_pylist())
    assert (repeats[domains == "specialist"] == 0).any()  # specialist has far more than 20% of the budget
    assert repeats.max() == 1 and summary["within_tolerance"]
    assert summary["domains"]["specialist"]["documents_used"] < summary["domains"]["specialist"]["documents"]


def test_zero_weight_domain_gets_nothing(counted: pa.Table) -> None:
    repeats, _ = _plan(counted, MixtureConfig(weights={"general": 0.5, "specialist": 0.5}))
    assert not repeats[np.asarray(counted.column("domain").to_pylist()) == "code"].any()


def test_a_missing_domain_is_renormalised_or_fails(counted: pa.Table) -> None:
    without_code = counted.filter(pa.compute.not_equal(counted.column("domain"), "code"))
    _, summary = _plan(without_code, MixtureConfig())
    assert summary["domains"]["general"]["target_share"] == pytest.approx(0.6 / 0.9, abs=1e-6)
    assert any("['code'] have no tokens" in note for note in summary["notes"])
    with pytest.raises(ValueError, match="code"):
        _plan(without_code, MixtureConfig(missing_domain="fail"))


def test_heldout_documents_are_used_once_and_left_out_of_budget_and_shares(counted: pa.Table) -> None:
    domains = np.asarray(counted.column("domain").to_pylist())
    tokens = counted.column("n_tokens").to_numpy().astype(np.int64)
    train = np.arange(counted.num_rows) % 10 != 3  # every tenth document held out
    for cfg in (MixtureConfig(seed=3), MixtureConfig(weights={"general": 0.5, "specialist": 0.5}, total_tokens=40_000)):
        repeats, summary = _plan(counted, cfg, train)
        assert (repeats[~train] == 1).all()  # whatever the weights: up-sampled, sub-sampled or weight 0 (code)
        shares = _shares((tokens * repeats)[train], domains[train])
        for domain in ("general", "specialist", "code"):
            assert abs(shares[domain] - cfg.weights.get(domain, 0.0)) <= 0.005, (cfg.weights, domain)
            planned = summary["domains"][domain]
            assert planned["heldout_documents"] == int((~train & (domains == domain)).sum())
            assert planned["documents"] == int((train & (domains == domain)).sum())
            assert planned["available_tokens"] == int(tokens[train & (domains == domain)].sum())
        assert summary["total_tokens"]["realised"] == int((tokens * repeats)[train].sum())
        assert summary["within_tolerance"]


def test_plan_depends_on_the_seed_only_through_which_documents_fill_the_fraction(counted: pa.Table) -> None:
    first, _ = _plan(counted, MixtureConfig(total_tokens=100_000, seed=1))
    again, _ = _plan(counted, MixtureConfig(total_tokens=100_000, seed=1))
    other, _ = _plan(counted, MixtureConfig(total_tokens=100_000, seed=2))
    assert np.array_equal(first, again) and not np.array_equal(first, other)


def test_fit_plans_training_documents_as_the_packer_counts_them(
    quality_shards: list[str], tokenizer_url: str, splits_url: str, tmp_path: Path
) -> None:
    """Held-out documents once; training documents cost their tokens plus BOS and EOS, and those shares hit."""
    artifacts = fit_mixture(quality_shards, MixtureConfig(), tokenizer_url, splits_url, 2, str(tmp_path))
    plan = plan_rows(artifacts)
    ids, domains = plan.column("id").to_pylist(), plan.column("domain").to_pylist()
    assert plan.column("split").to_pylist() == load_boundaries(splits_url).split_of(ids, domains).tolist()
    split = np.asarray(plan.column("split").to_pylist())
    repeats = plan.column("repeats").to_numpy()
    assert set(split) == {"train", "validation", "test"} and (repeats[split != "train"] == 1).all()
    train = split == "train"
    domains = np.asarray(plan.column("domain").to_pylist())[train]
    packed = (plan.column("n_tokens").to_numpy().astype(np.int64)[train] + 2) * repeats[train]
    summary = storage.read_json(artifacts["mixture_summary"])
    assert summary["frame_tokens_per_document"] == 2
    for domain, share in _shares(packed, domains).items():
        assert abs(share - MixtureConfig().weights[domain]) <= 0.005, domain
        assert summary["domains"][domain]["realised_tokens"] == int(packed[domains == domain].sum())


def test_fit_writes_identical_artifacts_for_any_shard_layout(
    quality_shards: list[str], tokenizer_url: str, splits_url: str, tmp_path: Path
) -> None:
    cfg = MixtureConfig(total_tokens=120_000)
    forward = fit_mixture(quality_shards, cfg, tokenizer_url, splits_url, 2, str(tmp_path / "forward"))
    backward = fit_mixture(quality_shards[::-1], cfg, tokenizer_url, splits_url, 2, str(tmp_path / "backward"))
    assert storage.read_bytes(forward["mixture_summary"]) == storage.read_bytes(backward["mixture_summary"])
    plans = [storage.read_json(artifacts["mixture_plan"]) for artifacts in (forward, backward)]
    assert plans[0]["domains"] == plans[1]["domains"]
    assert plan_rows(forward).equals(plan_rows(backward))
    plan = plan_rows(forward)
    assert plan.column_names == ["id", "domain", "n_tokens", "split", "repeats"]
    assert plan.column("id").to_pylist() == sorted(plan.column("id").to_pylist())


def test_duplicate_ids_are_refused(quality_shards: list[str], tokenizer_url: str, tmp_path: Path) -> None:
    """Within a shard (dedup has already refused ids repeated across shards)."""
    twice = str(tmp_path / "twice.parquet")
    table = storage.read_parquet(quality_shards[0])
    storage.write_parquet(twice, pa.concat_tables([table, table.slice(0, 1)]))
    with pytest.raises(ValueError, match="not unique"):
        count_tokens([twice], tokenizer_url, num_threads=1)


@pytest.mark.parametrize("window", [4096, 3])
@pytest.mark.parametrize(
    "cfg",
    [MixtureConfig(), MixtureConfig(total_tokens=40_000, seed=5), MixtureConfig(total_tokens=150_000, seed=9)],
    ids=["default", "subsampled", "upsampled"],
)
def test_streamed_plan_equals_the_plan_made_in_memory(
    counted: pa.Table, cfg: MixtureConfig, window: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two streaming passes over ranges of the seeded order (more when a window of ranges is small) choose the
    same copies as sorting every document in memory did: full epochs, the prefix that fits, then the later
    documents that fill what is left."""
    monkeypatch.setattr(plan_module, "_WINDOW_DOCUMENTS", window)
    ids, domains = counted.column("id").to_pylist(), counted.column("domain").to_pylist()
    tokens = counted.column("n_tokens").to_numpy()
    train = np.arange(len(ids)) % 7 != 0
    repeats, _ = plan_repeats(ids, domains, tokens, train, cfg)
    expected = repeats_in_memory(ids, domains, tokens, train, cfg)
    assert np.array_equal(repeats, expected)
    assert (repeats[train] != repeats[train].max()).any()  # a fractional epoch was sampled


def test_without_materialising_every_training_document_comes_once(counted: pa.Table) -> None:
    """For a run that mixes at train time: no copies, nothing sampled away, whatever the weights; the summary's
    target shares are the domains' own."""
    heldout = np.arange(counted.num_rows) % 10 == 0
    repeats, summary = _plan(counted, MixtureConfig(materialise=False, weights={"code": 1.0}), train=~heldout)
    assert (repeats[~heldout] == 1).all() and (repeats[heldout] == 1).all()
    domains = np.asarray(counted.column("domain").to_pylist())
    tokens = counted.column("n_tokens").to_numpy()
    natural = _shares(tokens[~heldout], domains[~heldout])
    for domain, share in natural.items():
        assert summary["domains"][domain]["target_share"] == pytest.approx(share, abs=1e-6)  # rounded to 6 places
    assert any("materialise is off" in note for note in summary["notes"])
