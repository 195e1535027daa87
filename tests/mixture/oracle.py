"""The mixture plan as one process computed it with every document in memory (before the plan was streamed):
per domain full epochs, then a greedy fill in seeded order. The streamed planner must give the same repeats."""

from __future__ import annotations

import math

import numpy as np

from pretrain_core.mixture.config import MixtureConfig
from pretrain_core.mixture.plan import _budget, _domain_order, _effective_weights
from pretrain_core.tokenize.keys import doc_key


def repeats_in_memory(
    ids: list[str], domains: list[str], n_tokens: np.ndarray, train: np.ndarray, cfg: MixtureConfig
) -> np.ndarray:
    domain_of = np.asarray(domains, dtype=object)
    tokens = np.asarray(n_tokens, dtype=np.int64)
    names = sorted(set(domains) | set(cfg.weights), key=_domain_order)
    available = {d: int(tokens[train & (domain_of == d)].sum()) for d in names}
    weights = _effective_weights(cfg, available, [])
    ceiling = min(math.floor(available[d] * cfg.max_upsample / w) for d, w in weights.items() if w > 0)
    budget = _budget(cfg, ceiling, weights, available, [])
    order_ids = np.argsort(np.array(ids, dtype=str), kind="stable")  # the old plan ran over counts sorted by id
    keys = np.fromiter((doc_key(cfg.seed, i) for i in ids), dtype=np.uint64, count=len(ids))
    repeats = np.ones(len(ids), dtype=np.int64)
    for domain in names:
        members = order_ids[(train & (domain_of == domain))[order_ids]]
        target = min(math.ceil(weights.get(domain, 0.0) * budget), math.floor(available[domain] * cfg.max_upsample))
        repeats[members] = _domain_repeats(tokens[members], keys[members], target)
    return repeats


def _domain_repeats(tokens: np.ndarray, keys: np.ndarray, target: int) -> np.ndarray:
    available = int(tokens.sum())
    if target <= 0 or available == 0:
        return np.zeros(len(tokens), dtype=np.int64)
    epochs, remainder = divmod(target, available)
    order = np.argsort(keys, kind="stable")
    repeats = np.full(len(tokens), epochs, dtype=np.int64)
    repeats[order[_greedy_fill(tokens[order], remainder)]] += 1
    return repeats


def _greedy_fill(sizes: np.ndarray, gap: int) -> np.ndarray:
    chosen = np.zeros(len(sizes), dtype=bool)
    prefix = int(np.searchsorted(np.cumsum(sizes), gap, side="right"))
    chosen[:prefix] = True
    gap -= int(sizes[:prefix].sum())
    for i in np.flatnonzero(sizes[prefix:] <= gap) + prefix:
        if gap == 0:
            break
        if sizes[i] <= gap:
            chosen[i] = True
            gap -= int(sizes[i])
    return chosen
