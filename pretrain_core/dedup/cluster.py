"""Clusters from verified pairs, each led by its best-ranked member, with no member far from its representative.

Union-find links documents transitively, so a chain a~b~c can join a and c even when they share little. After
linking, every member is checked against its representative; a cluster with a member below the floor is rebuilt
greedily around its best-ranked members, so the guarantee "similar to what was kept" holds for every drop.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np

Similarity = Callable[[int, np.ndarray], np.ndarray]


def union_find_roots(n: int, pairs: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """For each of ``n`` documents, the best-ranked (lowest ``rank``) member of its connected component."""
    parent = list(range(n))
    order = rank.tolist()

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs.tolist():
        root_a, root_b = find(a), find(b)
        if root_a != root_b:
            # The better-ranked root wins, so every root is the best-ranked member of its component.
            if order[root_a] < order[root_b]:
                parent[root_b] = root_a
            else:
                parent[root_a] = root_b
    roots = np.arange(n, dtype=np.int64)
    touched = np.unique(pairs)
    roots[touched] = [find(x) for x in touched.tolist()]
    return roots


def split_loose_clusters(
    roots: np.ndarray, rank: np.ndarray, similarity: Similarity, floor: float
) -> tuple[np.ndarray, int]:
    """Rebuild clusters holding a member less similar than ``floor`` to its representative; return the new roots
    and how many clusters were split.

    Leaders are picked in rank order: the best-ranked member not yet within ``floor`` of a leader becomes the next
    one. Each member then joins the leader it is most similar to (the best-ranked on ties), which is at least
    ``floor`` similar since the member was close to the leader that covered it. Deterministic, and each member
    ends up with the nearest representative rather than merely the first one close enough.
    """
    roots = roots.copy()
    splits = 0
    order = np.lexsort((rank, roots))
    sorted_roots = roots[order]
    bounds = np.flatnonzero(np.concatenate(([True], sorted_roots[1:] != sorted_roots[:-1], [True])))
    for lo, hi in itertools.pairwise(bounds.tolist()):
        if hi - lo == 1:
            continue
        remaining = order[lo:hi]
        leaders = []
        while remaining.size:
            leaders.append(int(remaining[0]))
            remaining = remaining[1:][similarity(leaders[-1], remaining[1:]) < floor]
        if len(leaders) == 1:
            roots[order[lo:hi]] = leaders[0]
            continue
        members = np.setdiff1d(order[lo:hi], leaders)
        closeness = np.stack([similarity(leader, members) for leader in leaders])
        roots[leaders] = leaders
        roots[members] = np.array(leaders)[np.argmax(closeness, axis=0)]
        splits += 1
    return roots, splits
