"""Train-time mixing: shares follow the schedule within one draw, every rank computes the same stream, a resume
from the saved state continues it exactly at another world size, and the bill counts what was drawn."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from pretrain_core.train.sections.data import DataConfig, MixingConfig
from pretrain_core.train.shards.mixing import MixedBatches
from pretrain_core.train.shards.sequences import Sequences

CONSTANT = MixingConfig.model_validate(
    {"points": [{"at": 0, "weights": {"general": 0.6, "specialist": 0.3, "code": 0.1}}]}
)


def _sequences(counts: dict[str, int]) -> Sequences:
    """Rows numbered through all domains (row i's first id is i), so a batch tells which rows it drew; every
    third row of a domain is in its head bucket; scores fall with the row number."""
    domains = np.array([d for d, n in counts.items() for _ in range(n)])
    ids = (np.arange(domains.size)[:, None] + np.arange(5)[None, :]).astype(np.int32)
    licences = np.empty(domains.size, dtype=object)
    licences[:] = [("MIT",)] * domains.size
    buckets = np.where(np.arange(domains.size) % 3 == 0, "head", "middle")
    scores = np.linspace(1, 0, domains.size, dtype=np.float32)
    return Sequences(ids, domains, np.array([f"{d}-source" for d in domains]), licences, buckets, scores)


SEQUENCES = _sequences({"general": 40, "specialist": 17, "code": 5})


def _drawn(batches: MixedBatches, steps: int) -> list[int]:
    return [int(x) for _ in range(steps) for x in next(batches)[0][:, 0]]


def test_constant_weights_hold_within_one_draw_at_every_point() -> None:
    batches = MixedBatches(SEQUENCES, CONSTANT, 10, 0, 1, seed=1, total_draws=1000)
    drawn = _drawn(batches, 100)
    domains = SEQUENCES.domains[drawn]
    for end in range(10, 1001, 10):
        for domain, weight in (("general", 0.6), ("specialist", 0.3), ("code", 0.1)):
            assert abs((domains[:end] == domain).sum() - weight * end) <= 1
    # within a domain each pass is a permutation of its rows: the 5 code rows come 20 times each
    assert np.bincount(np.array(drawn)[domains == "code"] - 57).tolist() == [20] * 5


def test_a_staged_schedule_and_a_linear_anneal() -> None:
    staged = MixingConfig.model_validate(
        {"points": [{"at": 0, "weights": {"general": 1.0}}, {"at": 0.5, "weights": {"code": 1.0}}]}
    )
    drawn = SEQUENCES.domains[_drawn(MixedBatches(SEQUENCES, staged, 10, 0, 1, 2, total_draws=200), 20)]
    assert set(drawn[:100]) == {"general"} and set(drawn[100:]) == {"code"}
    linear = staged.model_copy(update={"interpolate": "linear"})
    assert linear.weights_at(0.25).tolist() == pytest.approx([0.5, 0.5])  # groups sorted: code, general
    drawn = SEQUENCES.domains[_drawn(MixedBatches(SEQUENCES, linear, 10, 0, 1, 2, total_draws=200), 20)]
    code_share = [(drawn[i : i + 20] == "code").mean() for i in range(0, 200, 20)]
    assert code_share[0] <= 0.1 and code_share[:5] == sorted(code_share[:5]) and code_share[5:] == [1.0] * 5


def test_ranks_slice_one_stream_and_a_resume_at_another_world_size_continues_it() -> None:
    """4 ranks x 3 sequences, saved after 7 micro-steps, resumed on 2 ranks x 6 (the same global batch)."""
    whole = MixedBatches(SEQUENCES, CONSTANT, 12, 0, 1, seed=9, total_draws=600)
    expected = [next(whole)[0] for _ in range(20)]
    four = [MixedBatches(SEQUENCES, CONSTANT, 3, r, 4, seed=9, total_draws=600) for r in range(4)]
    got = [torch.cat([next(b)[0] for b in four]) for _ in range(7)]
    saved = four[0].state_dict()
    assert all(b.state_dict() == saved for b in four)
    two = [MixedBatches(SEQUENCES, CONSTANT, 6, r, 2, seed=9, total_draws=600, state=saved) for r in range(2)]
    got += [torch.cat([next(b)[0] for b in two]) for _ in range(13)]
    assert all(torch.equal(a, b) for a, b in zip(expected, got, strict=True))
    bill = two[1].state_dict()["bill"]
    drawn = torch.cat(expected)[:, 0].numpy()
    assert bill["sequences"] == 240 and bill["by"]["domain"]["code"] == 4 * int(
        (SEQUENCES.domains[drawn] == "code").sum()
    )


def test_an_anneal_on_the_head_bucket_and_a_curriculum_by_score() -> None:
    """The last fifth of the run draws only head-bucket general text; under a descending curriculum each group's
    first pass goes best score first."""
    anneal = MixingConfig.model_validate(
        {"points": [{"at": 0, "weights": {"general": 0.5, "code": 0.5}}, {"at": 0.8, "weights": {"general/head": 1}}],
         "curriculum": "descending"}
    )  # fmt: skip
    batches = MixedBatches(SEQUENCES, anneal, 10, 0, 1, seed=4, total_draws=100)
    drawn = np.array(_drawn(batches, 10))
    assert set(SEQUENCES.buckets[drawn[80:]]) == {"head"} and set(SEQUENCES.domains[drawn[80:]]) == {"general"}
    general = drawn[:80][SEQUENCES.domains[drawn[:80]] == "general"]
    assert (np.diff(SEQUENCES.scores[general]) < 0).all()  # 40 general rows, best first: one whole first pass
    assert batches.state_dict()["bill"]["by"]["quality_bucket"]["head"] >= 4 * 20
    with pytest.raises(ValueError, match=r"name \['general/head'\] and their domain too"):
        MixingConfig.model_validate({"points": [{"at": 0, "weights": {"general": 0.5, "general/head": 0.5}}]})


def test_weights_naming_a_domain_without_sequences_are_refused() -> None:
    only = _sequences({"general": 10})
    with pytest.raises(ValueError, match=r"name \['code', 'specialist'\], which have no training sequences"):
        MixedBatches(only, CONSTANT, 2, 0, 1, 0, 10)


def test_the_data_section_builds_the_sampler_it_names() -> None:
    built = DataConfig(micro_batch_size=2, mixing=CONSTANT).build_batches(SEQUENCES, 0, 2, 0, 50, {})
    assert isinstance(built, MixedBatches) and built.total_draws == 50 * 2 * 2
    with pytest.raises(ValueError, match="must start at 0 and increase"):
        MixingConfig.model_validate({"points": [{"at": 0.2, "weights": {"general": 1.0}}]})
    with pytest.raises(ValueError, match="sum to 1"):
        MixingConfig.model_validate({"points": [{"at": 0, "weights": {"general": 0.5}}]})
