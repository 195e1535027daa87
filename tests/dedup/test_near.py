from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from pretrain_core.dedup.config import DedupConfig
from pretrain_core.dedup.near import Sketches, sketch_texts
from pretrain_core.dedup.normalize import CodePoints, normalize_text
from tests.dedup.oracle import near_duplicate_roots

NAMES = ["GPL-2", "GPL-2 edited", "GPL-1", "LGPL-2", "LGPL-2.1", "md5sum", "b2sum", "sha256sum", "sha512sum"]


@pytest.fixture(scope="module")
def texts(licence: Callable[[str], str], man_page: Callable[[str], str], edit_words: Callable[..., str]) -> list[str]:
    gpl2 = licence("GPL-2")
    edited = edit_words(gpl2, 0.07, donor=licence("Apache-2.0"))
    pages = [man_page(name) for name in NAMES[5:]]
    return [normalize_text(t) for t in [gpl2, edited, licence("GPL-1"), licence("LGPL-2"), licence("LGPL-2.1")]] + [
        normalize_text(p) for p in pages
    ]


def _clusters(texts: list[str], groups: np.ndarray | None = None, **overrides: Any) -> tuple[set[frozenset[str]], Any]:
    cfg = DedupConfig(**overrides)
    sketches = sketch_texts(CodePoints.of(texts), cfg)
    rank = np.arange(len(texts))
    result = near_duplicate_roots(
        sketches, rank, np.zeros(len(texts), dtype=np.int64) if groups is None else groups, cfg
    )
    clusters: dict[int, set[str]] = {}
    for doc, root in enumerate(result.roots.tolist()):
        clusters.setdefault(root, set()).add(NAMES[doc])
    return {frozenset(c) for c in clusters.values() if len(c) > 1}, result


def test_edited_copy_is_found_and_same_template_documents_are_not(texts: list[str]) -> None:
    clusters, result = _clusters(texts)
    # sha256sum and sha512sum are the same help2man page but for a word per line: Jaccard 0.86.
    assert clusters == {frozenset({"GPL-2", "GPL-2 edited"}), frozenset({"sha256sum", "sha512sum"})}
    assert result.verified_pairs == 2 and result.guard_splits == 0 and (result.lsh_bands, result.lsh_rows) == (17, 7)


def test_verification_stops_false_candidates_from_chaining(texts: list[str]) -> None:
    # 64 bands of 2 rows make nearly every related pair a candidate.
    clusters, result = _clusters(texts, bands=64, rows=2)
    assert clusters == {frozenset({"GPL-2", "GPL-2 edited"}), frozenset({"sha256sum", "sha512sum"})}
    assert result.candidate_pairs > 5 * result.verified_pairs
    unverified, raw = _clusters(texts, bands=64, rows=2, verify_candidates=False)
    assert raw.verified_pairs == raw.candidate_pairs == result.candidate_pairs
    # Unverified, the guard alone cuts the chained families apart: nothing below the threshold is removed.
    assert unverified == clusters and raw.guard_splits > 0 and raw.below_threshold == 0
    # With a margin the guard lets chains through: LGPL-2 and LGPL-2.1 (Jaccard 0.72), md5sum and sha256sum (0.74,
    # same help2man template) are removed at less than the threshold, and counted.
    loose, chained = _clusters(texts, bands=64, rows=2, verify_candidates=False, guard_margin=0.1)
    assert frozenset({"LGPL-2", "LGPL-2.1"}) in loose
    assert frozenset({"md5sum", "sha256sum", "sha512sum"}) in loose
    assert chained.below_threshold >= 2


def test_sketch_estimate_verifies_like_exact_jaccard(texts: list[str]) -> None:
    clusters, result = _clusters(texts, verify_with="sketch")
    assert clusters == {frozenset({"GPL-2", "GPL-2 edited"}), frozenset({"sha256sum", "sha512sum"})}
    assert isinstance(result.roots, np.ndarray)
    assert sketch_texts(CodePoints.of(texts[:2]), DedupConfig(verify_with="sketch")).sets is None


def test_groups_are_never_compared(texts: list[str]) -> None:
    clusters, _ = _clusters(texts, groups=np.array([0, 1, 0, 0, 0, 0, 0, 1, 1]))
    assert clusters == {frozenset({"sha256sum", "sha512sum"})}


def test_simhash_candidates_are_verified_by_jaccard_or_by_their_hamming_distance(texts: list[str]) -> None:
    copy = texts[0].replace("warranty", "guarantee", 1)
    near_identical = [texts[0], copy, *texts[2:]]
    clusters, result = _clusters(near_identical, method="simhash")
    assert clusters == {frozenset({"GPL-2", "GPL-2 edited"}), frozenset({"sha256sum", "sha512sum"})}
    assert (result.lsh_bands, result.lsh_rows) == (4, 0)
    clusters, _ = _clusters(near_identical, method="simhash", verify_with="sketch")
    assert clusters == {frozenset({"GPL-2", "GPL-2 edited"})}  # the man pages are more than 3 bits apart


def test_texts_without_shingles_never_match() -> None:
    cfg = DedupConfig()
    sketches = sketch_texts(CodePoints.of(["", "", "a few words"]), cfg)
    result = near_duplicate_roots(sketches, np.arange(3), np.zeros(3, dtype=np.int64), cfg)
    assert result.roots.tolist() == [0, 1, 2] and result.candidate_pairs == 0


def test_concatenated_sketches_line_up(texts: list[str]) -> None:
    cfg = DedupConfig()
    joined = Sketches.concat([sketch_texts(CodePoints.of(texts[:3]), cfg), sketch_texts(CodePoints.of(texts[3:]), cfg)])
    whole = sketch_texts(CodePoints.of(texts), cfg)
    assert np.array_equal(joined.sketch, whole.sketch) and joined.sets is not None and whole.sets is not None
    assert np.array_equal(joined.sets.hashes, whole.sets.hashes)


def test_pairs_just_above_the_threshold_are_found(
    licence: Callable[[str], str], edit_words: Callable[..., str]
) -> None:
    names = ["GPL-2", "GPL-3", "LGPL-2.1", "Apache-2.0", "MPL-2.0", "MPL-1.1", "GFDL-1.3", "Artistic", "LGPL-3"]
    originals = [licence(name) for name in names]
    # 7.5% of words rewritten in runs of 10, four ways per licence: Jaccard 0.80-0.83 with the original.
    edits = [
        (i, edit_words(t, 0.075, donor=originals[i - 1], seed=s)) for i, t in enumerate(originals) for s in range(4)
    ]
    docs = [normalize_text(t) for t in originals + [e for _, e in edits]]
    pairs = [(i, len(originals) + k) for k, (i, _) in enumerate(edits)]
    cfg = DedupConfig()
    sketches = sketch_texts(CodePoints.of(docs), cfg)
    assert sketches.sets is not None
    close = [(a, b) for a, b in pairs if sketches.sets.jaccard(a, np.array([b]))[0] >= cfg.threshold]
    assert len(close) >= 30

    def found(weight: float) -> int:
        settings = cfg.model_copy(update={"lsh_false_negative_weight": weight})
        roots = near_duplicate_roots(sketches, np.arange(len(docs)), np.zeros(len(docs), dtype=np.int64), settings)
        return sum(roots.roots[a] == roots.roots[b] for a, b in close)

    # Candidates are verified, so the default bands favour finding pairs over avoiding false candidates.
    assert found(cfg.lsh_false_negative_weight) >= 0.9 * len(close)
    assert found(cfg.lsh_false_negative_weight) > found(0.9)
