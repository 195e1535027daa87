"""Plan how many times each document enters the training set so domain token shares hit their targets.

Splits are assigned before the plan (``fit_splits``): validation and test documents are used exactly once, so the
evaluation sets do not depend on the weights, and the budget and shares count training documents only, each with
the ids the packer puts around it (BOS/EOS), so the weights hold in the packed train split.

Per domain the target is ``weight * budget`` tokens: every training document gets the same number of full epochs,
then the documents first in a seeded order (by a hash of seed and id, so independent of shard layout) fill the
fractional epoch while they fit, which lands within one document of the target. The budget defaults to the
largest one that no domain needs more than ``max_upsample`` epochs for; a larger requested budget is shrunk to it,
so shares hold and the plan says why.

The plan is a few numbers per domain, not a row per document: its full epochs and the place in the seeded order
where the fractional epoch ends (`MixturePlan`), found from per-shard token counts in two streaming passes (token
sums over 65,536 ranges of the order, then the documents of the one range where the target falls). A document's
copies are then a function of its id, domain and split; the stage reads only its own shard's counts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import sentencepiece as spm

from pretrain_core import storage
from pretrain_core.mixture.config import MixtureConfig
from pretrain_core.schema import DOMAINS, TOKEN_IDS
from pretrain_core.tokenize.encode import encode_batch, load_tokenizer
from pretrain_core.tokenize.keys import doc_key
from pretrain_core.tokenize.splits import SPLITS, SplitBoundaries, load_boundaries

PLAN_FILE = "plan.json"
SUMMARY_FILE = "plan_summary.json"
_RANGE_BITS = 16  # the seeded order is cut into 2**16 ranges by the keys' top bits for the first pass
COUNT_COLUMNS = ["id", "domain", "n_tokens"]  # what planning reads of a shard's counts (not its token ids)
ROWS_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("domain", pa.string(), nullable=False),
        pa.field("n_tokens", pa.int32(), nullable=False),
        pa.field("split", pa.string(), nullable=False),
        pa.field("repeats", pa.int32(), nullable=False),
    ]
)


@dataclass(frozen=True)
class DomainSample:
    """A domain's plan: every training document gets ``epochs`` copies, and one more when its (key, id) in the
    seeded order sorts before ``cutoff`` (None: none does) or it is one of ``extra``, the few later documents
    small enough to fill what the first one that did not fit left over."""

    epochs: int
    cutoff: tuple[int, str] | None
    extra: frozenset[str] = frozenset()


@dataclass(frozen=True)
class MixturePlan:
    seed: int
    domains: dict[str, DomainSample]

    def repeats(self, ids: Sequence[str], domains: Sequence[str], train: np.ndarray) -> np.ndarray:
        """Copies of each document: held-out documents once, training documents by their domain's sample."""
        out = np.ones(len(ids), dtype=np.int64)
        for row in np.flatnonzero(train).tolist():
            sample = self.domains.get(domains[row], DomainSample(0, None))
            extra = sample.cutoff is not None and (doc_key(self.seed, ids[row]), ids[row]) < sample.cutoff
            out[row] = sample.epochs + int(extra or ids[row] in sample.extra)
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "domains": {
                d: {
                    "epochs": s.epochs,
                    "cutoff": None if s.cutoff is None else [str(s.cutoff[0]), s.cutoff[1]],
                    "extra": sorted(s.extra),
                }
                for d, s in self.domains.items()
            },
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> MixturePlan:
        domains = {
            d: DomainSample(
                int(v["epochs"]),
                None if v["cutoff"] is None else (int(v["cutoff"][0]), v["cutoff"][1]),
                frozenset(v["extra"]),
            )
            for d, v in data["domains"].items()
        }
        return MixturePlan(int(data["seed"]), domains)


@dataclass
class _DomainTally:
    """What the first pass keeps per domain: training tokens and documents per range of the seeded order."""

    tokens: np.ndarray
    documents: np.ndarray
    heldout: int = 0

    @staticmethod
    def empty() -> _DomainTally:
        return _DomainTally(np.zeros(1 << _RANGE_BITS, np.int64), np.zeros(1 << _RANGE_BITS, np.int64))


Counts = Callable[[], Iterator[pa.Table]]  # the (id, domain, n_tokens) tables, readable more than once
IsTrain = Callable[[list[str], list[str]], np.ndarray]  # ids, domains -> which are training documents


def training_split(boundaries: SplitBoundaries) -> IsTrain:
    return lambda ids, domains: np.asarray(boundaries.split_of(ids, domains) == SPLITS[0], dtype=bool)


def _keyed(table: pa.Table, seed: int, is_train: IsTrain, frame_tokens: int) -> tuple[Any, ...]:
    ids, domains = table.column("id").to_pylist(), table.column("domain").to_pylist()
    keys = np.fromiter((doc_key(seed, i) for i in ids), dtype=np.uint64, count=len(ids))
    tokens = table.column("n_tokens").to_numpy().astype(np.int64) + frame_tokens
    return ids, np.asarray(domains, dtype=object), keys, tokens, is_train(ids, domains)


def plan_counts(
    counts: Counts, cfg: MixtureConfig, is_train: IsTrain, frame_tokens: int
) -> tuple[MixturePlan, dict[str, Any]]:
    """The plan and its summary from every document's token count, read in two passes; memory does not grow with
    the number of documents (bar the documents of one range of the order per domain in the second pass)."""
    tallies: dict[str, _DomainTally] = {}
    for table in counts():
        _, domains, keys, tokens, train = _keyed(table, cfg.seed, is_train, frame_tokens)
        ranges = (keys >> np.uint64(64 - _RANGE_BITS)).astype(np.int64)
        for domain in set(domains.tolist()):
            tally = tallies.setdefault(domain, _DomainTally.empty())
            member = domains == domain
            tally.heldout += int((member & ~train).sum())
            chosen = member & train
            np.add.at(tally.tokens, ranges[chosen], tokens[chosen])
            np.add.at(tally.documents, ranges[chosen], 1)
    if not tallies:
        raise ValueError("mixture: no documents in the input shards")
    names = sorted(set(tallies) | set(cfg.weights), key=_domain_order)
    available = {d: int(tallies[d].tokens.sum()) if d in tallies else 0 for d in names}
    notes: list[str] = []
    if cfg.materialise:
        weights = _effective_weights(cfg, available, notes)
        ceiling = min(math.floor(available[d] * cfg.max_upsample / w) for d, w in weights.items() if w > 0)
        budget = _budget(cfg, ceiling, weights, available, notes)
    else:
        budget = ceiling = sum(available.values())
        weights = {d: tokens / budget for d, tokens in available.items() if tokens}
        notes.append("materialise is off: every training document once (train.data.mixing weighs the domains)")
    targets, epochs, wanted = {}, {}, {}
    for domain in names:
        cap = math.floor(available[domain] * cfg.max_upsample)
        # ceil, so the domain that sets the budget gets exactly its cap, not one token less after rounding
        wished = math.ceil(weights.get(domain, 0.0) * budget) if cfg.materialise else available[domain]
        targets[domain] = min(wished, cap)
        if targets[domain] <= 0 or available[domain] == 0:
            epochs[domain] = 0
            continue
        epochs[domain], remainder = divmod(targets[domain], available[domain])
        if remainder:
            cumulative = np.cumsum(tallies[domain].tokens)
            crossing = int(np.searchsorted(cumulative, remainder, side="right"))  # the range the target falls in
            before = int(cumulative[crossing - 1]) if crossing else 0
            wanted[domain] = (crossing, remainder - before)
    samples = _fractions(counts, cfg, is_train, frame_tokens, tallies, wanted)
    sampled = {d: samples[d].sample if d in samples else (None, frozenset[str]()) for d in names}
    plan = MixturePlan(cfg.seed, {d: DomainSample(epochs[d], *sampled[d]) for d in names})
    realised, used, extra_docs = {}, {}, {}
    for domain in names:
        tally = tallies.get(domain, _DomainTally.empty())
        crossing = wanted.get(domain, (0, 0))[0]
        fraction = samples.get(domain)
        extra_tokens = int(tally.tokens[:crossing].sum()) + fraction.tokens if fraction else 0
        extra_docs[domain] = int(tally.documents[:crossing].sum()) + fraction.documents if fraction else 0
        realised[domain] = epochs[domain] * available[domain] + extra_tokens
        documents = int(tally.documents.sum())
        used[domain] = documents if epochs[domain] else extra_docs[domain]
    summary = _summary(
        cfg, names, tallies, realised, used, epochs, extra_docs, weights, available, targets, ceiling, budget, notes
    )
    return plan, summary


@dataclass
class _Fraction:
    """The second pass's state for one domain: the window of ranges to read next, the tokens still wanted, and
    what was taken from the window ranges so far (the prefix's cut-off, the later documents that fit, their sum)."""

    start: int
    wanted: int
    cutoff: tuple[int, str] | None = None
    extra: set[str] | None = None
    tokens: int = 0
    documents: int = 0

    @property
    def done(self) -> bool:
        return self.start >= 1 << _RANGE_BITS or (self.cutoff is not None and self.wanted == 0)

    @property
    def sample(self) -> tuple[tuple[int, str] | None, frozenset[str]]:
        return self.cutoff, frozenset(self.extra or ())


_WINDOW_DOCUMENTS = 4096  # documents of a domain a window of ranges holds at least (bar the last)


def _fractions(
    counts: Counts,
    cfg: MixtureConfig,
    is_train: IsTrain,
    frame_tokens: int,
    tallies: dict[str, _DomainTally],
    wanted: dict[str, tuple[int, int]],
) -> dict[str, _Fraction]:
    """Further passes for each domain whose fraction ends inside a range of the order: its training documents in
    a window of ranges from there (a few thousand documents), in order, are taken while they fit; the first that
    does not is the cut-off, and later ones that still fit what is left are taken too until nothing is left (the
    next window in another pass, when one is not enough)."""
    state = {d: _Fraction(crossing, need) for d, (crossing, need) in wanted.items()}
    while pending := {d: f for d, f in state.items() if not f.done}:
        windows = {d: (f.start, _window_end(tallies[d].documents, f.start)) for d, f in pending.items()}
        found: dict[str, list[tuple[int, str, int]]] = {d: [] for d in pending}
        for table in counts():
            ids, domains, keys, tokens, train = _keyed(table, cfg.seed, is_train, frame_tokens)
            ranges = (keys >> np.uint64(64 - _RANGE_BITS)).astype(np.int64)
            for domain, (lo, hi) in windows.items():
                rows = np.flatnonzero((domains == domain) & train & (ranges >= lo) & (ranges < hi))
                found[domain] += [(int(keys[r]), ids[r], int(tokens[r])) for r in rows.tolist()]
        for domain, fraction in pending.items():
            _take(fraction, sorted(found[domain]))
            fraction.start = windows[domain][1]
    return state


def _window_end(documents: np.ndarray, start: int) -> int:
    """The end of the window of ranges from ``start`` holding at least `_WINDOW_DOCUMENTS` documents (or all)."""
    reached = np.cumsum(documents[start:])
    return start + int(np.searchsorted(reached, _WINDOW_DOCUMENTS, side="left")) + 1


def _take(fraction: _Fraction, members: list[tuple[int, str, int]]) -> None:
    """Take a window's documents (in order) as the greedy fill does: while they fit, then, after the first that
    does not (the cut-off), each later one that still fits what is left."""
    sizes = np.array([size for _, _, size in members], dtype=np.int64)
    first = 0
    if fraction.cutoff is None:
        first = int(np.searchsorted(np.cumsum(sizes), fraction.wanted, side="right"))
        key, doc_id, _ = members[first]  # the window starts with the range the target falls in: someone misfits
        fraction.cutoff, fraction.extra = (key, doc_id), set()
        fraction.tokens, fraction.documents = int(sizes[:first].sum()), first
        fraction.wanted -= fraction.tokens
    assert fraction.extra is not None
    for (_, doc_id, _), size in zip(members[first:], sizes[first:].tolist(), strict=True):
        if fraction.wanted == 0:
            break
        if size <= fraction.wanted:
            fraction.extra.add(doc_id)
            fraction.wanted -= size
            fraction.tokens += size
            fraction.documents += 1


def plan_repeats(
    ids: list[str], domains: list[str], n_tokens: np.ndarray, train: np.ndarray, cfg: MixtureConfig
) -> tuple[np.ndarray, dict[str, Any]]:
    """Repeats per document (aligned with the inputs) and the plan summary, for documents in memory: the same
    planner as for shards (`plan_counts`), over one table whose split is given."""
    table = pa.table({"id": ids, "domain": domains, "n_tokens": pa.array(np.asarray(n_tokens), pa.int64())})
    train = np.asarray(train, dtype=bool)
    plan, summary = plan_counts(lambda: iter([table]), cfg, lambda _ids, _domains: train, 0)
    return plan.repeats(ids, domains, train), summary


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


def _summary(
    cfg: MixtureConfig,
    names: list[str],
    tallies: dict[str, _DomainTally],
    realised: dict[str, int],
    used: dict[str, int],
    epochs: dict[str, int],
    extra_docs: dict[str, int],
    weights: dict[str, float],
    available: dict[str, int],
    targets: dict[str, int],
    ceiling: int,
    budget: int,
    notes: list[str],
) -> dict[str, Any]:
    total = sum(realised.values())
    domains: dict[str, Any] = {}
    for d in names:
        tally = tallies.get(d, _DomainTally.empty())
        share = realised[d] / total if total else 0.0
        target_share = weights.get(d, 0.0)
        documents = int(tally.documents.sum())
        domains[d] = {
            "heldout_documents": tally.heldout,
            "documents": documents,
            "documents_used": used[d],
            "max_repeats": epochs[d] + int(extra_docs[d] > 0) if documents else 0,
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
    """(id, domain, n_tokens) of every document in the shards, sorted by id (for analysis and tests)."""
    tokenizer = load_tokenizer(tokenizer_url)
    tables = [_shard_counts(url, tokenizer, num_threads).select(COUNT_COLUMNS) for url in input_urls]
    return pa.concat_tables(tables).sort_by("id")


def count_shard_tokens(input_url: str, tokenizer_url: str, num_threads: int, partial_url: str) -> None:
    """The fit's map: write (id, domain, n_tokens, token_ids) of one shard's documents to ``partial_url``. The ids
    travel on with the documents (`token_ids_of`), so the tokenize stage need not encode them again."""
    storage.write_parquet(partial_url, _shard_counts(input_url, load_tokenizer(tokenizer_url), num_threads))


def _shard_counts(url: str, tokenizer: spm.SentencePieceProcessor, num_threads: int) -> pa.Table:
    table = storage.read_parquet(url, columns=["id", "domain", "text"])
    if pc.count_distinct(table.column("id")).as_py() != table.num_rows:
        raise ValueError(f"mixture: document ids are not unique in {url}; the plan is keyed by id")
    token_ids = encode_batch(tokenizer, table.column("text").to_pylist(), num_threads)
    counts = pa.array(token_ids.value_lengths(), pa.int32())
    return table.select(["id", "domain"]).append_column("n_tokens", counts).append_column("token_ids", token_ids)


def token_ids_of(artifacts: Mapping[str, str], inputs: Iterable[str] | None = None) -> pa.Table:
    """(id, token_ids) of the documents of the given input shards (or all), as the fit's map encoded them; null
    ids where the counts were written before the map kept them (a fit resumed across that change)."""
    counts = storage.read_json_artifact(artifacts["mixture_plan"])["counts"]
    urls = list(counts.values()) if inputs is None else [counts[shard_name(url)] for url in inputs]
    tables = []
    for url in urls:
        table = storage.read_parquet(url)
        if "token_ids" not in table.column_names:
            table = table.append_column("token_ids", pa.nulls(table.num_rows, TOKEN_IDS.type))
        tables.append(table.select(["id", "token_ids"]))
    return pa.concat_tables(tables) if tables else pa.schema([ROWS_SCHEMA.field("id"), TOKEN_IDS]).empty_table()


def fit_mixture(
    input_urls: list[str],
    cfg: MixtureConfig,
    tokenizer_url: str,
    splits_url: str,
    frame_tokens: int,
    artifact_dir: str,
) -> dict[str, str]:
    """Count tokens of every shard (a partial per shard under ``artifact_dir/counts``, named as the shard), then
    plan (`plan_mixture`): the whole fit in this process."""
    partials = [storage.join(artifact_dir, "counts", shard_name(url)) for url in input_urls]
    if len(set(partials)) != len(partials):
        raise ValueError("mixture: input shards must have distinct file names (their counts are kept by name)")
    for url, partial in zip(input_urls, partials, strict=True):
        count_shard_tokens(url, tokenizer_url, cfg.num_threads, partial)
    return plan_mixture(partials, cfg, splits_url, frame_tokens, artifact_dir)


def shard_name(url: str) -> str:
    """An input shard's file name, which its counts partial carries too."""
    return url.rstrip("/").rsplit("/", 1)[-1]


def plan_mixture(
    partials: Sequence[str], cfg: MixtureConfig, splits_url: str, frame_tokens: int, artifact_dir: str
) -> dict[str, str]:
    """Plan the repeats of the training documents from the shards' token counts (`partials`, each named as its
    input shard) and write ``plan.json`` (the plan and each shard's counts) and ``plan_summary.json``; each
    document's split comes from ``splits_url`` and it costs its tokens plus ``frame_tokens``. Returns
    ``{"mixture_plan": <url>, "mixture_summary": <url>}``."""
    if not partials:
        raise ValueError("mixture: no input shards")

    def read() -> Iterator[pa.Table]:
        return (storage.read_parquet(url, columns=COUNT_COLUMNS) for url in partials)

    plan, summary = plan_counts(read, cfg, training_split(load_boundaries(splits_url)), frame_tokens)
    plan_url = storage.join(artifact_dir, PLAN_FILE)
    summary_url = storage.join(artifact_dir, SUMMARY_FILE)
    by_shard = {shard_name(url): url for url in partials}
    storage.write_json(plan_url, {**plan.to_json(), "counts": by_shard, "splits": splits_url})
    storage.write_json(summary_url, {"frame_tokens_per_document": frame_tokens, **summary})
    return {"mixture_plan": plan_url, "mixture_summary": summary_url}


def plan_rows(artifacts: Mapping[str, str], inputs: Iterable[str] | None = None) -> pa.Table:
    """Each document's row under the plan (id, domain, n_tokens, split, repeats), for the given input shards or
    all of them, by id: what a per-document view needs (analysis, tests); the stage reads one shard's at a time."""
    data = storage.read_json_artifact(artifacts["mixture_plan"])
    plan, counts = MixturePlan.from_json(data), data["counts"]
    urls = list(counts.values()) if inputs is None else [counts[shard_name(url)] for url in inputs]
    tables = [storage.read_parquet(url, columns=COUNT_COLUMNS) for url in urls]
    table = pa.concat_tables(tables) if tables else ROWS_SCHEMA.empty_table()
    ids, domains = table.column("id").to_pylist(), table.column("domain").to_pylist()
    split = load_boundaries(data["splits"]).split_of(ids, domains)
    repeats = plan.repeats(ids, domains, split == SPLITS[0])
    rows = table.append_column("split", pa.array(split.tolist(), pa.string()))
    return rows.append_column("repeats", pa.array(repeats, pa.int32())).cast(ROWS_SCHEMA).sort_by("id")
