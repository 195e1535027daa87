"""Dedup measured on labelled near-duplicates of real text: our fit_dedup against plain datasketch MinHashLSH.

The set (data/labelled/dedup, built by scripts/build_labelled_dedup.py) labels pairs of documents with their true
Jaccard on the stage's own shingles, and is complete above COMPLETE_ABOVE: any pair it does not list is less
similar than that. Both systems see every document of the set at once, as a corpus, and put them into clusters;
a pair is predicted a duplicate when both documents land in one cluster, and is a duplicate when its Jaccard
reaches the threshold. So precision counts every pair a system joins, labelled or not, and a cluster chained
through intermediate documents pays for each pair it wrongly joins.

Ours is ``fit_dedup`` with the pipeline's default dedup config, its threshold set to each measured value. The
baseline is datasketch's ``MinHash`` (its default SHA-1 hashing) over the same shingle sets, indexed in a plain
``MinHashLSH(threshold, num_perm)``: every LSH candidate is taken as a duplicate and candidates are joined by
union-find, as MinHash dedup tools commonly do. Both keep the same representative per cluster (the stage's
rule), against which each member's true similarity is measured.
"""

from __future__ import annotations

import gzip
import json
import tempfile
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from datasketch import MinHash, MinHashLSH

from pretrain_core import schema, storage
from pretrain_core.config import load_config
from pretrain_core.dedup.cluster import union_find_roots
from pretrain_core.dedup.config import DedupConfig
from pretrain_core.dedup.normalize import normalize_texts
from pretrain_core.dedup.shingles import ShingleSets, shingle_sets
from pretrain_core.dedup.stage import fit_dedup, read_clusters, representative_rank
from pretrain_core.licences import NOASSERTION
from pretrain_eval.stage_quality.figures import OURS, Bar, Figure, f_beta, precision_recall

STAGE = "dedup"
BASELINE = "datasketch MinHashLSH"
F1_BARS = {0.8: 0.97, 0.7: 0.93}  # threshold -> least F1 ours must reach
MEMBER_MARGIN = 0.0  # every member at least (threshold - margin) similar to its representative: the threshold
COMPLETE_ABOVE = 0.3  # the set labels every pair at or above this Jaccard
DOCUMENTS_FILE = "documents.jsonl.gz"
PAIRS_FILE = "pairs.jsonl"
CHAIN = "chain"  # pair kind inside a chain of revisions, reported apart (see chain_ceiling)
CEILING = "best possible clustering"


@dataclass(frozen=True)
class LabelledPair:
    """Two documents of the set (indices) and their true shingle overlap."""

    a: int
    b: int
    kind: str
    shared: int
    union: int

    @property
    def jaccard(self) -> float:
        return self.shared / self.union if self.union else 0.0


@dataclass(frozen=True)
class LabelledSet:
    """Per document: id, text, domain and the group it was built in; and the labelled pairs between them."""

    ids: list[str]
    texts: list[str]
    domains: list[str]
    groups: list[str]
    pairs: list[LabelledPair]


def default_dedup_config() -> DedupConfig:
    """The dedup settings of the pipeline's default (demo) config."""
    return load_config().dedup


def stage_shingles(texts: Sequence[str], cfg: DedupConfig) -> ShingleSets:
    """The shingle sets the dedup stage compares: its normalisation, then its shingling under ``cfg``."""
    normalized = normalize_texts(texts, cfg.ignore)
    return shingle_sets(normalized, cfg.shingle, cfg.word_ngram, cfg.char_ngram, cfg.min_unspaced_share)


def load_set(set_dir: str, limit: int | None = None, groups: Collection[str] | None = None) -> LabelledSet:
    """The labelled set, or the named ``groups`` of it; with ``limit``, that many groups taken evenly across it
    (every kind keeps its share). Only the pairs between the documents taken are kept."""
    lines = gzip.decompress(storage.read_bytes(storage.join(set_dir, DOCUMENTS_FILE))).decode("utf-8").splitlines()
    docs = [json.loads(line) for line in lines]
    names = list(dict.fromkeys(d["group"] for d in docs if groups is None or d["group"] in groups))
    if limit is not None and limit < len(names):
        names = [names[i * len(names) // limit] for i in range(limit)]
    chosen = set(names)
    docs = [d for d in docs if d["group"] in chosen]
    index = {d["id"]: i for i, d in enumerate(docs)}
    pairs = []
    for line in storage.read_bytes(storage.join(set_dir, PAIRS_FILE)).decode("utf-8").splitlines():
        pair = json.loads(line)
        if pair["a"] in index and pair["b"] in index:
            pairs.append(LabelledPair(index[pair["a"]], index[pair["b"]], pair["kind"], pair["shared"], pair["union"]))
    ids, texts, domains, groups_of = ([d[name] for d in docs] for name in ("id", "text", "domain", "group"))
    return LabelledSet(ids, texts, domains, groups_of, pairs)


def evaluate(set_dir: str, limit: int | None = None) -> list[Figure]:
    """Precision, recall and F1 at Jaccard 0.8 and 0.7, per pair kind, and the clusters' size and tightness, for
    ours and the baseline."""
    labelled = load_set(set_dir, limit)
    base_cfg = default_dedup_config()
    sets = stage_shingles(labelled.texts, base_cfg)
    lengths = np.array([len(t) for t in labelled.texts], dtype=np.int64)
    rank = representative_rank(labelled.ids, lengths, base_cfg.representative)
    signatures = baseline_minhashes(sets, base_cfg)
    figures: list[Figure] = []
    for threshold, f1_bar in F1_BARS.items():
        cfg = base_cfg.model_copy(update={"threshold": threshold})
        ours = our_representatives(labelled, cfg)
        theirs = baseline_representatives(signatures, rank, cfg)
        for system, representatives in ((OURS, ours), (BASELINE, theirs)):
            figures += pair_figures(system, threshold, f1_bar, representatives, labelled.pairs)
            figures += cluster_figures(system, threshold, representatives, sets)
            figures += removal_figures(system, threshold, representatives, rank, labelled, sets)
        figures.append(chain_ceiling(threshold, labelled))
    return figures


def our_representatives(labelled: LabelledSet, cfg: DedupConfig) -> np.ndarray:
    """Each document's cluster representative (its index) as ``fit_dedup`` decides over the whole set."""
    n = len(labelled.ids)
    table = pa.table(
        {
            "id": labelled.ids,
            "text": labelled.texts,
            "source": ["labelled"] * n,
            "domain": labelled.domains,
            "licence": [NOASSERTION] * n,
            "location": labelled.ids,
            "code_language": [None] * n,
            "lang": ["und"] * n,
            "lang_score": [0.0] * n,
        },
        schema=schema.CLEAN,
    )
    with tempfile.TemporaryDirectory() as workdir:
        shard = storage.join(workdir, "clean", "part-00000.parquet")
        storage.write_parquet(shard, table)
        clusters = read_clusters(fit_dedup([shard], cfg, storage.join(workdir, "artifacts"))["clusters"])
    index = {doc_id: i for i, doc_id in enumerate(labelled.ids)}
    representative = dict(zip(clusters["id"].to_pylist(), clusters["dup_cluster"].to_pylist(), strict=True))
    return np.array([index[representative[doc_id]] for doc_id in labelled.ids], dtype=np.int64)


def baseline_minhashes(sets: ShingleSets, cfg: DedupConfig) -> list[MinHash | None]:
    """datasketch MinHash of each document's shingle set (None for a document without shingles)."""
    out: list[MinHash | None] = []
    for doc in range(len(sets)):
        hashes = sets.of(doc)
        if hashes.size == 0:
            out.append(None)
            continue
        minhash = MinHash(num_perm=cfg.num_perm, seed=cfg.seed)
        minhash.update_batch([h.tobytes() for h in hashes])
        out.append(minhash)
    return out


def baseline_representatives(signatures: Sequence[MinHash | None], rank: np.ndarray, cfg: DedupConfig) -> np.ndarray:
    """Clusters of plain MinHashLSH: every candidate pair a duplicate, joined by union-find; representative by
    the stage's rule (the best-ranked member)."""
    lsh = MinHashLSH(threshold=cfg.threshold, num_perm=cfg.num_perm)
    for doc, minhash in enumerate(signatures):
        if minhash is not None:
            lsh.insert(doc, minhash)
    pairs = [
        (doc, other)
        for doc, minhash in enumerate(signatures)
        if minhash is not None
        for other in lsh.query(minhash)
        if other > doc
    ]
    edges = np.array(sorted(pairs), dtype=np.int64).reshape(-1, 2)
    doc_at_rank = np.argsort(rank)
    return doc_at_rank[rank[union_find_roots(len(signatures), edges, rank)]]


def pair_figures(
    system: str, threshold: float, f1_bar: float, representatives: np.ndarray, pairs: Sequence[LabelledPair]
) -> list[Figure]:
    """Precision, recall and F1 over every pair the clusters join but those inside a chain; F1 per kind over the
    labelled pairs of that kind."""
    group = f"jaccard>={threshold:g}"
    joined = np.array([representatives[p.a] == representatives[p.b] for p in pairs], dtype=bool)
    positive = np.array([p.jaccard >= threshold for p in pairs], dtype=bool)
    kinds = np.array([p.kind for p in pairs])
    counted = kinds != CHAIN
    sizes = np.bincount(representatives)
    predicted = int((sizes * (sizes - 1) // 2).sum()) - int(np.count_nonzero(joined & ~counted))
    true_positives = int(np.count_nonzero(joined & positive & counted))
    positives = int(np.count_nonzero(positive & counted))
    precision, recall = precision_recall(true_positives, predicted - true_positives, positives - true_positives)
    bar = Bar(">=", f1_bar) if system == OURS else None
    figures = [
        Figure(STAGE, group, system, "precision", precision, support=int(counted.sum())),
        Figure(STAGE, group, system, "recall", recall, support=positives),
        Figure(STAGE, group, system, "f1", f_beta(precision, recall), bar, int(counted.sum())),
    ]
    for kind in sorted(set(kinds.tolist())):
        mine = kinds == kind
        tp = int(np.count_nonzero(joined & positive & mine))
        fp = int(np.count_nonzero(joined & ~positive & mine))
        fn = int(np.count_nonzero(~joined & positive & mine))
        f1 = f_beta(*precision_recall(tp, fp, fn))
        figures.append(Figure(STAGE, f"{group} {kind}", system, "f1", f1, support=int(mine.sum())))
    return figures


def chain_ceiling(threshold: float, labelled: LabelledSet) -> Figure:
    """The best F1 any clustering can reach on the chain pairs: each chain's best partition, found by trying all.

    A chain's neighbours are duplicates and its ends are not, which no partition satisfies at once; this is why
    chain pairs are reported apart from the headline figures."""
    chains: dict[str, list[LabelledPair]] = {}
    for pair in labelled.pairs:
        if pair.kind == CHAIN:
            chains.setdefault(labelled.groups[pair.a], []).append(pair)
    tp = fp = fn = 0
    for pairs in chains.values():
        docs = sorted({p.a for p in pairs} | {p.b for p in pairs})
        best = min(
            (
                _partition_errors(threshold, pairs, dict(zip(docs, labels, strict=True)))
                for labels in _partitions(len(docs))
            ),
            key=lambda counts: (counts[1] + counts[2], -counts[0]),
        )
        tp, fp, fn = tp + best[0], fp + best[1], fn + best[2]
    support = sum(len(p) for p in chains.values())
    f1 = f_beta(*precision_recall(tp, fp, fn))
    return Figure(STAGE, f"jaccard>={threshold:g} {CHAIN}", CEILING, "f1", f1, support=support)


def _partitions(n: int) -> list[tuple[int, ...]]:
    """Every partition of n items, as a block label per item (restricted growth strings)."""
    labelings: list[tuple[int, ...]] = [()]
    for _ in range(n):
        labelings = [(*labels, block) for labels in labelings for block in range(max(labels, default=-1) + 2)]
    return labelings


def _partition_errors(threshold: float, pairs: Sequence[LabelledPair], block: dict[int, int]) -> tuple[int, int, int]:
    joined = [block[p.a] == block[p.b] for p in pairs]
    positive = [p.jaccard >= threshold for p in pairs]
    tp = sum(j and q for j, q in zip(joined, positive, strict=True))
    return tp, sum(joined) - tp, sum(positive) - tp


def removal_figures(
    system: str,
    threshold: float,
    representatives: np.ndarray,
    rank: np.ndarray,
    labelled: LabelledSet,
    sets: ShingleSets,
) -> list[Figure]:
    """What dedup is for, judged by what it removes rather than by which pairs share a cluster: a removal is
    right when the removed document is at least `threshold` similar to the kept document it was removed for;
    a miss is a kept document with a better-ranked kept document that similar (one of the two should have gone).
    Chains (A~B~C with A and C apart) cost the pair figures whatever the clustering; here removing B for A and
    keeping C is exactly right. Reported for the whole set and for the chain groups, with the count of removals
    below the threshold (which must be 0)."""
    group = f"jaccard>={threshold:g}"
    removed = np.flatnonzero(representatives != np.arange(len(representatives)))
    similarity = np.array([float(sets.jaccard(int(rep), np.array([doc]))[0]) for doc, rep in
                           zip(removed.tolist(), representatives[removed].tolist(), strict=True)])  # fmt: skip
    kept = representatives == np.arange(len(representatives))
    missed = {
        max(p.a, p.b, key=lambda doc: rank[doc])
        for p in labelled.pairs
        if kept[p.a] and kept[p.b] and p.jaccard >= threshold
    }
    chain_groups = {labelled.groups[p.a] for p in labelled.pairs if p.kind == CHAIN}
    figures = []
    for name, docs in (("", None), (f" {CHAIN}", {d for d, g in enumerate(labelled.groups) if g in chain_groups})):
        mine = np.array([docs is None or int(d) in docs for d in removed], dtype=bool)
        right = int(np.count_nonzero(similarity[mine] >= threshold))
        wrong = int(np.count_nonzero(mine)) - right
        misses = sum(1 for d in missed if docs is None or d in docs)
        f1 = f_beta(*precision_recall(right, wrong, misses))
        ours = system == OURS
        support = right + wrong + misses
        figures.append(
            Figure(STAGE, f"{group}{name}", system, "removal_f1", f1, Bar(">=", 0.97) if ours else None, support)
        )
        if not name:
            bar = Bar("<=", 0.0) if ours else None
            figures.append(Figure(STAGE, group, system, "removed_below_threshold", float(wrong), bar, len(removed)))
    return figures


def cluster_figures(system: str, threshold: float, representatives: np.ndarray, sets: ShingleSets) -> list[Figure]:
    """How many clusters, the largest, and the least true similarity of any member to its representative."""
    group = f"jaccard>={threshold:g}"
    members: dict[int, list[int]] = {}
    for doc, representative in enumerate(representatives.tolist()):
        if doc != representative:
            members.setdefault(representative, []).append(doc)
    worst = min(
        (float(sets.jaccard(rep, np.array(docs)).min()) for rep, docs in members.items()),
        default=1.0,
    )
    sizes = Counter(representatives.tolist())
    floor = round(threshold - MEMBER_MARGIN, 6)
    return [
        Figure(STAGE, group, system, "clusters", float(len(members)), support=len(representatives)),
        Figure(STAGE, group, system, "largest_cluster", float(max(sizes.values(), default=0)), support=len(members)),
        Figure(
            STAGE,
            group,
            system,
            "worst_member_similarity",
            worst,
            Bar(">=", floor) if system == OURS else None,
            len(members),
        ),
    ]
