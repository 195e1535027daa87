from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pretrain_core.dedup.cluster import split_loose_clusters, union_find_roots
from pretrain_core.dedup.normalize import CodePoints, normalize_text
from pretrain_core.dedup.shingles import shingle_sets


def test_roots_are_the_best_ranked_member_of_each_component() -> None:
    rank = np.array([4, 2, 0, 5, 1, 3])
    pairs = np.array([[0, 1], [1, 3], [4, 5]])
    assert union_find_roots(6, pairs, rank).tolist() == [1, 1, 2, 1, 4, 4]
    assert union_find_roots(3, np.empty((0, 2), dtype=np.int64), rank[:3]).tolist() == [0, 1, 2]


def test_a_chain_of_overlapping_windows_is_split_around_representatives(licence: Callable[[str], str]) -> None:
    # Overlapping 1000-word windows of one text, 60 words apart: neighbours are ~0.89 similar, windows three
    # steps apart only ~0.69, yet linking neighbours chains all eight into one component.
    words = normalize_text(licence("GPL-3")).split()
    windows = [" ".join(words[60 * i : 60 * i + 1000]) for i in range(8)]
    sets = shingle_sets(CodePoints.of(windows), "word", 5, 5, 0.3)
    neighbours = np.array([[i, i + 1] for i in range(7)])
    assert (np.array([sets.jaccard(i, np.array([i + 1]))[0] for i in range(7)]) > 0.85).all()
    rank = np.arange(8)
    chained = union_find_roots(8, neighbours, rank)
    assert set(chained.tolist()) == {0}
    roots, splits = split_loose_clusters(chained, rank, sets.jaccard, floor=0.7)
    assert splits == 1 and len(set(roots.tolist())) > 1
    for doc, root in enumerate(roots.tolist()):
        assert sets.jaccard(root, np.array([doc]))[0] >= 0.7
    assert roots.tolist() == [0, 0, 3, 3, 3, 6, 6, 6]  # each window with the nearest representative


def test_tight_clusters_are_left_alone(licence: Callable[[str], str]) -> None:
    text = normalize_text(licence("GPL-2"))
    sets = shingle_sets(CodePoints.of([text, text + " and one more closing line", licence("BSD")]), "word", 5, 5, 0.3)
    roots, splits = split_loose_clusters(np.array([0, 0, 2]), np.arange(3), sets.jaccard, floor=0.7)
    assert splits == 0 and roots.tolist() == [0, 0, 2]
