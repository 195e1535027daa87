"""Plan how many times each document enters the training set so domain token shares hit their targets.

Splits are assigned before the plan (``fit_splits``): validation and test documents are used exactly once, so the
evaluation sets do not depend on the weights, and the budget and shares count training documents only, each with
the ids the packer puts around it (BOS/EOS), so the weights hold in the packed train split.

Per domain the target is ``weight * budget`` tokens: every training document gets the same number of full epochs,
then a seeded sample of documents (ordered by a hash of seed and id, so independent of shard layout) fills the
fractional epoch greedily without overshooting, which lands within one small document of the target. The budget
defaults to the largest one that no domain needs more than ``max_upsample`` epochs for; a larger requested
budget is shrunk to it, so shares hold and the plan says why.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import sentencepiece as spm

from pretrain_core import storage
from pretrain_core.mixture.config import MixtureConfig
from pretrain_core.schema import DOMAINS
from pretrain_core.tokenize.encode import load_tokenizer, token_counts
from pretrain_core.tokenize.keys import doc_key
from pretrain_core.tokenize.splits import SPLITS, load_boundaries

PLAN_FILE = "plan.parquet"
SUMMARY_FILE = "plan.json"

PLAN_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("domain", pa.string(), nullable=False),
        pa.field("n_tokens", pa.int32(), nullable=False),
        pa.field("split", pa.string(), nullable=False),
        pa.field("repeats", pa.int32(), nullable=False),
    ]
)


def plan_repeats(
    ids: list[str], domains: list[str], n_tokens: np.ndarray, train: np.ndarray, cfg: MixtureConfig
) -> tuple[np.ndarray, dict[str, Any]]:
    """Repeats per document (aligned with the inputs) and the plan summary; ties in the sample break by input order.

    ``n_tokens`` is what each document adds to a training stream; documents outside ``train`` (held out) get one
    copy and count toward neither budget nor shares.
    """
    domain_of = np.asarray(domains, dtype=object)
    tokens = np.asarray(n_tokens, dtype=np.int64)
    train = np.asarray(train, dtype=bool)
    names = sorted(set(domains) | set(cfg.weights), key=_domain_order)
    available = {d: int(tokens[train & (domain_of == d)].sum()) for d in names}
    notes: list[str] = []
    weights = _effective_weights(cfg, available, notes)
    ceiling = min(math.floor(available[d] * cfg.max_upsample / w) for d, w in weights.items() if w > 0)
    budget = _budget(cfg, ceiling, weights, available, notes)
    keys = np.fromiter((doc_key(cfg.seed, i) for i in ids), dtype=np.uint64, count=len(ids))
    repeats = np.ones(len(ids), dtype=np.int64)  # held-out documents: once, whatever the weights
    targets: dict[str, int] = {}
    for domain in names:
        members = np.flatnonzero(train & (domain_of == domain))
        cap = math.floor(available[domain] * cfg.max_upsample)
        # ceil, so the domain that sets the budget gets exactly its cap, not one token less after rounding
        targets[domain] = min(math.ceil(weights.get(domain, 0.0) * budget), cap)
        repeats[members] = _domain_repeats(tokens[members], keys[members], targets[domain])
    summary = _summary(
        cfg, names, domain_of, train, tokens, repeats, weights, available, targets, ceiling, budget, notes
    )
    return repeats, summary


def _domain_order(domain: str) -> tuple[int, str]:
    return (DOMAINS.index(domain) if domain in DOMAINS else len(DOMAINS), domain)


def _effective_weights(cfg: MixtureConfig, available: dict[str, int], notes: list[str]) -> dict[str, float]:
    weights = {d: w for d, w in cfg.weights.items() if w > 0}
    missing = sorted(d for d in weights if available.get(d, 0) == 0)
    if missing and cfg.missing_domain == "fail":
        raise ValueError(f"mixture: weighted domain(s) {missing} have no tokens (mixture.missing_domain is 'fail')")
    kept = {d: w for d, w in weights.items() if d not in missing}
    if not kept:
        raise ValueError(f"mixture: none of the weighted domains {sorted(weights)} has any tokens")
    if missing:
        total = sum(kept.values())
        kept = {d: w / total for d, w in kept.items()}
        notes.append(f"domain(s) {missing} have no tokens; their weight is shared over {sorted(kept)}")
    return kept


def _budget(
    cfg: MixtureConfig, ceiling: int, weights: dict[str, float], available: dict[str, int], notes: list[str]
) -> int:
    binding = min(weights, key=lambda d: (available[d] / weights[d], d))
    if cfg.total_tokens is None:
        notes.append(f"budget is the largest reachable: {binding!r} is used {cfg.max_upsample:g}x (max_upsample)")
        return ceiling
    if cfg.total_tokens > ceiling:
        notes.append(
            f"total_tokens {cfg.total_tokens} shrunk to {ceiling}: {binding!r} would need more than "
            f"{cfg.max_upsample:g} epochs"
        )
        return ceiling
    return cfg.total_tokens


def _domain_repeats(tokens: np.ndarray, keys: np.ndarray, target: int) -> np.ndarray:
    """Full epochs plus a seeded greedy sample for the remainder, never overshooting ``target``."""
    available = int(tokens.sum())
    if target <= 0 or available == 0:
        return np.zeros(len(tokens), dtype=np.int64)
    epochs, remainder = divmod(target, available)
    order = np.argsort(keys, kind="stable")
    repeats = np.full(len(tokens), epochs, dtype=np.int64)
    repeats[order[_greedy_fill(tokens[order], remainder)]] += 1
    return repeats


def _greedy_fill(sizes: np.ndarray, gap: int) -> np.ndarray:
    """Mask of items taken in order while they fit; after the first misfit, later items that still fit."""
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


def _summary(
    cfg: MixtureConfig,
    names: list[str],
    domain_of: np.ndarray,
    train: np.ndarray,
    tokens: np.ndarray,
    repeats: np.ndarray,
    weights: dict[str, float],
    available: dict[str, int],
    targets: dict[str, int],
    ceiling: int,
    budget: int,
    notes: list[str],
) -> dict[str, Any]:
    realised = {d: int((tokens * repeats)[train & (domain_of == d)].sum()) for d in names}
    total = sum(realised.values())
    domains: dict[str, Any] = {}
    for d in names:
        member = train & (domain_of == d)
        share = realised[d] / total if total else 0.0
        target_share = weights.get(d, 0.0)
        domains[d] = {
            "heldout_documents": int((~train & (domain_of == d)).sum()),
            "documents": int(member.sum()),
            "documents_used": int((repeats[member] > 0).sum()),
            "max_repeats": int(repeats[member].max(initial=0)),
            "available_tokens": available[d],
            "target_tokens": targets[d],
            "realised_tokens": realised[d],
            "epochs": round(realised[d] / available[d], 6) if available[d] else 0.0,
            "target_share": round(target_share, 6),
            "realised_share": round(share, 6),
            "share_error_pp": round(100 * (share - target_share), 4),
        }
        if abs(share - target_share) > cfg.share_tolerance:
            notes.append(
                f"{d!r} share {share:.4f} misses its target {target_share:.4f}: the budget is too small for its "
                "document sizes (a larger total_tokens or smaller documents help)"
            )
    return {
        "requested_weights": cfg.weights,
        "max_upsample": cfg.max_upsample,
        "total_tokens": {"requested": cfg.total_tokens, "ceiling": ceiling, "target": budget, "realised": total},
        "domains": domains,
        "within_tolerance": all(abs(v["share_error_pp"]) <= 100 * cfg.share_tolerance for v in domains.values()),
        "notes": notes,
    }


def count_tokens(input_urls: list[str], tokenizer_url: str, num_threads: int) -> pa.Table:
    """(id, domain, n_tokens) of every document in the shards, sorted by id; duplicate ids are an error."""
    tokenizer = load_tokenizer(tokenizer_url)
    return _sorted_counts([_shard_counts(url, tokenizer, num_threads) for url in input_urls], len(input_urls))


def count_shard_tokens(input_url: str, tokenizer_url: str, num_threads: int, partial_url: str) -> None:
    """The fit's map: write (id, domain, n_tokens) of one shard's documents to ``partial_url``."""
    storage.write_parquet(partial_url, _shard_counts(input_url, load_tokenizer(tokenizer_url), num_threads))


def read_counts(partial_urls: list[str]) -> pa.Table:
    """The partials of `count_shard_tokens` as one table sorted by id; duplicate ids are an error."""
    return _sorted_counts([storage.read_parquet(url) for url in partial_urls], len(partial_urls))


def _shard_counts(url: str, tokenizer: spm.SentencePieceProcessor, num_threads: int) -> pa.Table:
    table = storage.read_parquet(url, columns=["id", "domain", "text"])
    counts = token_counts(tokenizer, table.column("text").to_pylist(), num_threads)
    return table.select(["id", "domain"]).append_column("n_tokens", pa.array(counts, pa.int32()))


def _sorted_counts(parts: list[pa.Table], shards: int) -> pa.Table:
    if not parts or not sum(part.num_rows for part in parts):
        raise ValueError(f"mixture: no documents in {shards} input shard(s)")
    counted = pa.concat_tables(parts)
    if pc.count_distinct(counted.column("id")).as_py() != counted.num_rows:
        raise ValueError("mixture: document ids are not unique across the input shards; the plan is keyed by id")
    return counted.sort_by("id")


def fit_mixture(
    input_urls: list[str],
    cfg: MixtureConfig,
    tokenizer_url: str,
    splits_url: str,
    frame_tokens: int,
    artifact_dir: str,
) -> dict[str, str]:
    """Count tokens of every document, plan the repeats of the training documents and write ``plan.parquet`` and
    ``plan.json`` (`plan_mixture`): the whole fit in this process."""
    counted = count_tokens(input_urls, tokenizer_url, cfg.num_threads)
    return plan_mixture(counted, cfg, splits_url, frame_tokens, artifact_dir)


def plan_mixture(
    counted: pa.Table, cfg: MixtureConfig, splits_url: str, frame_tokens: int, artifact_dir: str
) -> dict[str, str]:
    """Plan the repeats of the training documents of `counted` (id, domain, n_tokens) and write ``plan.parquet``
    and ``plan.json``; each document's split comes from ``splits_url`` and it costs its tokens plus
    ``frame_tokens``.

    Returns ``{"mixture_plan": <parquet url>, "mixture_summary": <json url>}``.
    """
    split = _split_of(counted, splits_url)
    repeats, summary = plan_repeats(
        counted.column("id").to_pylist(),
        counted.column("domain").to_pylist(),
        counted.column("n_tokens").to_numpy().astype(np.int64) + frame_tokens,
        pc.equal(split, SPLITS[0]).to_numpy(zero_copy_only=False),
        cfg,
    )
    plan = counted.append_column("split", split).append_column("repeats", pa.array(repeats, pa.int32()))
    plan_url = storage.join(artifact_dir, PLAN_FILE)
    summary_url = storage.join(artifact_dir, SUMMARY_FILE)
    storage.write_parquet(plan_url, plan.cast(PLAN_SCHEMA))
    storage.write_json(summary_url, {"frame_tokens_per_document": frame_tokens, **summary})
    return {"mixture_plan": plan_url, "mixture_summary": summary_url}


def _split_of(counted: pa.Table, splits_url: str) -> pa.Array:
    """The split of each counted document, from the assignment made before the mixture."""
    split = load_boundaries(splits_url).split_of(counted.column("id").to_pylist(), counted.column("domain").to_pylist())
    return pa.array(split.tolist(), pa.string())
