"""Dedup's reduce as rounds of partitioned jobs: no process ever holds more than one partition of the corpus.

Every table between rounds is Parquet under the fit's artifact directory, split into `dedup.partitions` parts by a
hash: documents and texts by their exact key, LSH band values by their bytes, pairs and edges by a text's key,
cluster members by their cluster. Each round's jobs read one part of each upstream table and write their rows to
the parts downstream rounds read (a shuffle through storage), so they run anywhere the shards run (worker
processes, Dask workers, Prefect tasks) and resume job by job: a job's marker, written last, holds its counts.

1. ``texts`` (per key part): the documents of every shard whose exact key falls in the part, grouped by key into
   distinct texts, each with its best document (the one `representative` prefers), its document count and the
   sketch of its first occurrence; then each sketched text's LSH band values, sent to the band parts. Duplicate
   document ids are caught here (ids are also sent to parts by id).
2. ``candidates`` (per band part): buckets of texts sharing a band, paired as `candidates.candidate_pairs` does,
   sent to the part of the better-ranked text. With exact Jaccard, a pair whose shingle counts differ too much to
   reach the threshold is dropped here (`_reachable`), before any shingle set travels for it.
3. ``verify_left`` / ``verify_right``: unique pairs get the left text's sketch in its part, the right one's in
   the other, and pairs at or above the threshold become edges (both directions, by source part).
4. ``send_R`` / ``min_R``: connected components by min-label propagation over the edges, a label being the
   best-ranked text seen; rounds repeat until no label changes.
5. ``gather`` / ``guard``: each text's sketch goes to its cluster's part, where clusters with a member less similar
   than the floor to its representative are rebuilt (`cluster.split_loose_clusters`), sizes are summed, and each
   text learns its representative.
6. ``assemble`` (per key part) and ``by_shard`` (per input shard): a row per document (id, dup_cluster,
   dup_cluster_size, drop_reason), then one clusters file per input shard, sorted by id.

The result equals what one process clustering the whole corpus gives (tests compare): the same buckets, pairs,
components (each led by its best-ranked text) and guard, whatever the number of parts.

A shuffle from S senders to R receivers costs S x R ranged reads (requests, on object storage): 10^7 per
round at 3,000 parts, 1.5 x 10^8 for the map's 50,000 shards of 100 M documents. With more senders than
`dedup.shuffle_fan_in`, a ``merge_<table>`` round goes between (a two-level shuffle): job (a, b) reads receiving
block a (about sqrt(S) consecutive row groups, one read on object storage) from each sender of sender group b
(about sqrt(S) senders) and writes a row group per receiver of the block; a receiver then reads one row group from
each group's file. About 2 x R x sqrt(S) reads instead of S x R, every job holding about one part, and receivers
get the same rows in the same (sender) order, so nothing downstream changes.

With `dedup.previous_index`, the ``texts`` round also reads the same part of an earlier build's texts (sketches
and shingle sets as that build stored them), ranked before every text of this build, so what duplicates them is
dropped naming the earlier document; pairs of two earlier texts are not compared again. ``finish`` writes this
build's index (``index.json``: its texts, which include the earlier ones, and the settings they were made with).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pretrain_core import storage
from pretrain_core.dedup import kernels
from pretrain_core.dedup.candidates import candidate_pairs
from pretrain_core.dedup.cluster import split_loose_clusters
from pretrain_core.dedup.config import DedupConfig
from pretrain_core.dedup.minhash import estimated_jaccard, lsh_params
from pretrain_core.dedup.simhash import band_ranges, hamming_similarity

EXACT_DUPLICATE = "exact_duplicate"
NEAR_DUPLICATE = "near_duplicate"
CLUSTERS = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("dup_cluster", pa.string(), nullable=False),
        pa.field("dup_cluster_size", pa.int32(), nullable=False),
        pa.field("drop_reason", pa.string(), nullable=True),  # null: kept (representative or unique)
    ]
)
# One shard's documents of one key part, as the fit's map writes them: the sketch (and, for exact-Jaccard
# verification, the shingle hashes) only on the first occurrence of a key in the shard.
KEYED = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("length", pa.int64(), nullable=False),
        pa.field("key", pa.binary(), nullable=False),
        pa.field("group", pa.string(), nullable=False),
        pa.field("shingle_count", pa.int64(), nullable=True),
        pa.field("sketch", pa.binary(), nullable=True),
        pa.field("shingles", pa.list_(pa.uint64()), nullable=True),
    ]
)
IDS = pa.schema([pa.field("id", pa.string(), nullable=False)])
KEYS_FILE, IDS_FILE = "keys.parquet", "ids.parquet"  # in each shard's partial directory, a row group per part
_PARTIAL_FILES = {"keys": KEYS_FILE, "ids": IDS_FILE}  # the map's shuffles, by table name
# A text's place in keep-preference order is (neg_length, best_id): its best document's negated length (0 when
# the smallest id is preferred) and id. Ids are unique, so the order is total. Texts of a previous build's index
# (`dedup.previous_index`) have `EARLIER` subtracted, so they come first: what a corpus already holds is kept.
EARLIER = 1 << 40
_KEPT_TABLES = ("texts", "clusters", "_jobs")  # what outlives the fit (`discard_intermediates`)
INDEX_FORMAT = "pretrain-dedup-index-1"
_ORDER = [pa.field("neg_length", pa.int64(), nullable=False), pa.field("best_id", pa.string(), nullable=False)]
TEXTS = pa.schema(
    [
        pa.field("key", pa.binary(), nullable=False),
        pa.field("group", pa.string(), nullable=False),
        *_ORDER,
        pa.field("docs", pa.int64(), nullable=False),
        pa.field("shingle_count", pa.int64(), nullable=True),
        pa.field("sketch", pa.binary(), nullable=True),
        pa.field("shingles", pa.list_(pa.uint64()), nullable=True),
    ]
)
DOCS = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("key", pa.binary(), nullable=False),
        pa.field("shard", pa.int32(), nullable=False),
    ]
)
BANDS = pa.schema(
    [
        pa.field("group", pa.string(), nullable=False),
        pa.field("band", pa.int32(), nullable=False),
        pa.field("value", pa.binary(), nullable=False),
        pa.field("key", pa.binary(), nullable=False),
        *_ORDER,
        pa.field("shingle_count", pa.int64(), nullable=False),
    ]
)


def _pair_fields(side: str) -> list[pa.Field]:
    return [
        pa.field(f"{side}_key", pa.binary(), nullable=False),
        pa.field(f"{side}_neg_length", pa.int64(), nullable=False),
        pa.field(f"{side}_id", pa.string(), nullable=False),
    ]


PAIRS = pa.schema(_pair_fields("a") + _pair_fields("b"))  # a ranks better than b
LEFTS = pa.schema(  # a left text's sketch, sent to a part where its pairs are verified
    [
        pa.field("key", pa.binary(), nullable=False),
        pa.field("sketch", pa.binary(), nullable=True),
        pa.field("shingles", pa.list_(pa.uint64()), nullable=True),
    ]
)
_PAIR_CHUNK = 65_536  # pairs whose sketches are compared in one numpy step
EDGES = pa.schema(_pair_fields("src") + _pair_fields("dst"))
LABELS = pa.schema(
    [
        pa.field("key", pa.binary(), nullable=False),
        pa.field("label_neg_length", pa.int64(), nullable=False),
        pa.field("label_id", pa.string(), nullable=False),
        pa.field("label_key", pa.binary(), nullable=False),
    ]
)
MESSAGES = LABELS  # "key" is the receiving text
MEMBERS = pa.schema(
    [
        pa.field("label_key", pa.binary(), nullable=False),
        pa.field("key", pa.binary(), nullable=False),
        *_ORDER,
        pa.field("docs", pa.int64(), nullable=False),
        pa.field("sketch", pa.binary(), nullable=True),
        pa.field("shingles", pa.list_(pa.uint64()), nullable=True),
    ]
)
ROOTS = pa.schema(
    [
        pa.field("key", pa.binary(), nullable=False),
        pa.field("root_key", pa.binary(), nullable=False),
        pa.field("root_id", pa.string(), nullable=False),
        pa.field("size", pa.int64(), nullable=False),
        pa.field("root_earlier", pa.bool_(), nullable=False),  # the root is a text of the previous build's index
    ]
)


SENDER = "sender"  # column a merged shuffle file adds: which sender each row came from (`_receive_with_senders`)


def part_of(values: list[bytes], parts: int) -> np.ndarray:
    """The part (0..parts-1) of each value: a 64-bit BLAKE2b of its bytes, so parts are even whatever the keys."""
    if parts == 1:
        return np.zeros(len(values), dtype=np.int64)
    digests = b"".join(hashlib.blake2b(v, digest_size=8).digest() for v in values)
    return (np.frombuffer(digests, dtype="<u8") % np.uint64(parts)).astype(np.int64)


def _split(table: pa.Table, parts_of_rows: np.ndarray, parts: int) -> Iterator[tuple[int, pa.Table]]:
    """Each part's rows of ``table``, in table order (empty tables too, so every reader finds its file)."""
    order = np.argsort(parts_of_rows, kind="stable")
    bounds = np.searchsorted(parts_of_rows[order], np.arange(parts + 1))
    for part in range(parts):
        yield part, table.take(pa.array(order[bounds[part] : bounds[part + 1]]))


@dataclass(frozen=True)
class Shuffle:
    """A table sent through storage: each of ``senders`` (file URLs, in sender order) holds a row group per
    receiving part, ``receivers`` of them. With more senders than the fan-in, ``block`` receivers share a merge
    job per sender group of ``group`` senders (`levels`)."""

    name: str
    senders: tuple[str, ...]
    receivers: int
    fan_in: int

    @property
    def levels(self) -> tuple[int, int] | None:
        """(block, group) when the shuffle goes through a merge round, else None. A merge job holds ``group``
        senders' rows for ``block`` receivers: with block x group <= senders that is at most a receiver's share."""
        senders = len(self.senders)
        if senders <= self.fan_in:
            return None
        block = min(self.receivers, math.isqrt(senders - 1) + 1)
        return block, max(1, senders // block)

    def merge_jobs(self) -> tuple[int, int]:
        """(blocks, groups): merge job j handles block j // groups and sender group j % groups."""
        block, group = self._merged_levels()
        return -(-self.receivers // block), -(-len(self.senders) // group)

    def merge_job(self, index: int) -> tuple[range, range]:
        """The receivers and the senders merge job ``index`` handles."""
        block, group = self._merged_levels()
        block_index, group_index = divmod(index, self.merge_jobs()[1])
        receivers = range(block_index * block, min(self.receivers, (block_index + 1) * block))
        return receivers, range(group_index * group, min(len(self.senders), (group_index + 1) * group))

    def _merged_levels(self) -> tuple[int, int]:
        if self.levels is None:
            raise ValueError(f"dedup: the shuffle of {self.name} has {len(self.senders)} senders, no merge round")
        return self.levels


@dataclass(frozen=True)
class ReduceJob:
    """One job of one round: which round, which part (or input shard)."""

    round: str
    index: int

    @property
    def key(self) -> str:
        return f"{self.round}-{self.index:05d}"


@dataclass(frozen=True)
class PartitionedReduce:
    """The reduce of one fit: its partials (one directory per input shard, in input order), config and directory.
    `next_jobs` says what is left (read from the markers), `run` does one job anywhere, `finish` writes the
    summary and the index of clusters files once every round is done."""

    partials: tuple[str, ...]
    cfg: DedupConfig
    artifact_dir: str

    @property
    def parts(self) -> int:
        return self.cfg.partitions

    def _url(self, table: str, *path: int) -> str:
        """``reduce/<table>/[<sender>/]<part or shard>.parquet``."""
        *folders, last = path
        return storage.join(self.artifact_dir, "reduce", table, *map(str, folders), f"{last:05d}.parquet")

    def _marker(self, job: ReduceJob) -> str:
        return storage.join(self.artifact_dir, "reduce", "_jobs", job.round, f"{job.index:05d}.json")

    def _stats(self, round_: str) -> list[dict[str, Any]]:
        return [storage.read_json(self._marker(job)) for job in self._jobs_of(round_)]

    # -- planning ---------------------------------------------------------------------------------------------

    def rounds(self) -> Iterator[str]:
        """The rounds in order, as far as the markers allow to know them (propagation rounds repeat until a
        round changes no label)."""
        near = self.cfg.method != "none"
        yield from self._merges("keys", "ids")
        yield "texts"
        if near:
            for round_, sent in (
                ("candidates", ("bands",)),
                ("verify_left", ("pairs",)),
                ("verify_right", ("half", "lefts")),
            ):
                yield from self._merges(*sent)
                yield round_
            yield from self._merges("edges")
            for number in itertools.count():
                yield f"send_{number}"
                yield from self._merges(f"messages_{number}")
                yield f"min_{number}"
                if not self._round_done(f"min_{number}") or not sum(s["changed"] for s in self._stats(f"min_{number}")):
                    break
            yield "gather"
            yield from self._merges("members")
            yield "guard"
            yield from self._merges("roots")
        yield "assemble"
        yield from self._merges("assembled")
        yield "by_shard"

    def _merges(self, *tables: str) -> Iterator[str]:
        """The merge rounds of the shuffles of ``tables`` that have too many senders for one level."""
        yield from (f"merge_{table}" for table in tables if self.shuffle(table).levels is not None)

    def shuffle(self, table: str) -> Shuffle:
        """Who sends ``table`` to whom: the map's shard partials to the parts (keys and ids), the parts to the
        input shards (assembled clusters), else the parts to the parts."""
        if table in _PARTIAL_FILES:
            senders, receivers = tuple(storage.join(p, _PARTIAL_FILES[table]) for p in self.partials), self.parts
        else:
            senders = tuple(self._url(table, sender) for sender in range(self.parts))
            receivers = len(self.partials) if table == "assembled" else self.parts
        return Shuffle(table, senders, receivers, self.cfg.shuffle_fan_in)

    def _jobs_of(self, round_: str) -> list[ReduceJob]:
        if round_.startswith("merge_"):
            blocks, groups = self.shuffle(round_.removeprefix("merge_")).merge_jobs()
            count = blocks * groups
        else:
            count = len(self.partials) if round_ == "by_shard" else self.parts
        return [ReduceJob(round_, i) for i in range(count)]

    def _done(self, round_: str) -> set[int]:
        """The jobs of ``round_`` whose marker is written: one listing of the round's markers (on object storage
        a request per thousand jobs, not one per job)."""
        names = storage.names_in(storage.join(self.artifact_dir, "reduce", "_jobs", round_))
        return {int(name.removesuffix(".json")) for name in names if name.endswith(".json") and name[:1].isdigit()}

    def _round_done(self, round_: str) -> bool:
        done = self._done(round_)
        return all(job.index in done for job in self._jobs_of(round_))

    def next_jobs(self) -> list[ReduceJob]:
        """The unfinished jobs of the first unfinished round (its earlier rounds are all done); [] when done."""
        for round_ in self.rounds():
            done = self._done(round_)
            jobs = [job for job in self._jobs_of(round_) if job.index not in done]
            if jobs:
                return jobs
        return []

    def run(self, job: ReduceJob) -> None:
        started = time.perf_counter()
        stats = self._step(job.round)(job)
        storage.write_json(self._marker(job), {**stats, "seconds": round(time.perf_counter() - started, 3)})

    def _step(self, round_: str) -> Callable[[ReduceJob], dict[str, Any]]:
        steps: dict[str, Callable[[ReduceJob], dict[str, Any]]] = {
            "texts": self._texts,
            "candidates": self._candidates,
            "verify_left": self._verify_left,
            "verify_right": self._verify_right,
            "send": self._send_step,
            "min": self._min_step,
            "gather": self._gather,
            "guard": self._guard,
            "assemble": self._assemble,
            "by_shard": self._by_shard,
        }
        if round_.startswith("merge_"):
            return self._merge
        return steps[round_.rsplit("_", 1)[0] if round_.startswith(("send_", "min_")) else round_]

    def discard_intermediates(self) -> None:
        """Remove what only the rounds read, once the fit is recorded: the partials and every shuffle but the
        texts (the index a later build matches against) and the clusters (what the stage reads). The job markers
        stay, so the reduce still reads as done; a fit run again from its maps redoes no round. Scratch then
        shrinks to the artifacts (the 1 GB scale corpus, 32 parts: 13 GB at the peak, 1.5 GB kept)."""
        for url in storage.list_dirs(storage.join(self.artifact_dir, "reduce")):
            if url.rstrip("/").rsplit("/", 1)[-1] not in _KEPT_TABLES:
                storage.remove(url)
        for partial in self.partials:
            storage.remove(partial)

    def seconds(self) -> float:
        """Seconds the jobs took, wherever they ran (from their markers)."""
        markers = storage.list_files(storage.join(self.artifact_dir, "reduce", "_jobs"), ".json")
        return sum(float(storage.read_json(url)["seconds"]) for url in markers)

    def finish(self, inputs: list[str]) -> dict[str, str]:
        """Write ``summary.json`` and ``clusters.json`` (input shard URL -> its clusters file) once every round is
        done; return {"clusters": ..., "summary": ...}."""
        if self.next_jobs():
            raise RuntimeError("dedup: the reduce has unfinished jobs; run them first")
        summary: dict[str, Any] = {name: 0 for name in ("candidate_pairs", "verified_pairs", "guard_splits")}
        summary["near_below_threshold"] = 0
        for stats in self._stats("texts"):
            for name in ("documents", "distinct_texts"):
                summary[name] = summary.get(name, 0) + stats[name]
        if self.cfg.method != "none":
            # pairs whose set sizes already rule the threshold out (markers of reduces before this count: none)
            summary["size_rejected_pairs"] = sum(s.get("size_rejected_pairs", 0) for s in self._stats("candidates"))
            summary["candidate_pairs"] = sum(s["candidate_pairs"] for s in self._stats("verify_left"))
            summary["verified_pairs"] = sum(s["verified_pairs"] for s in self._stats("verify_right"))
            guard = self._stats("guard")
            summary["guard_splits"] = sum(s["guard_splits"] for s in guard)
            summary["near_below_threshold"] = sum(s["below_threshold"] for s in guard)
        assembled = self._stats("assemble")
        for name in ("exact_duplicates", "near_duplicates", "clusters"):
            summary[name] = sum(s[name] for s in assembled)
        summary["largest_cluster"] = max((s["largest_cluster"] for s in assembled), default=0)
        summary["bands"], summary["rows"] = self._bands_and_rows()
        summary["partitions"] = self.parts
        summary["earlier_texts"] = sum(s.get("earlier_texts", 0) for s in self._stats("texts"))
        summary["duplicates_of_earlier"] = sum(s.get("duplicates_of_earlier", 0) for s in assembled)
        index = {url: self._url("clusters", shard) for shard, url in enumerate(inputs)}
        urls = {
            "clusters": storage.join(self.artifact_dir, "clusters.json"),
            "summary": storage.join(self.artifact_dir, "summary.json"),
            "index": storage.join(self.artifact_dir, "index.json"),
        }
        storage.write_json(urls["clusters"], index)
        storage.write_json(urls["summary"], summary)
        texts = [self._url("texts", part) for part in range(self.parts)]
        storage.write_json(
            urls["index"], {"format": INDEX_FORMAT, "settings": index_settings(self.cfg), "texts": texts}
        )
        return urls

    def _bands_and_rows(self) -> tuple[int, int]:
        if self.cfg.method == "minhash":
            return self.cfg.lsh_params or lsh_params(
                self.cfg.threshold, self.cfg.num_perm, self.cfg.lsh_false_negative_weight
            )
        if self.cfg.method == "simhash":
            return self.cfg.simhash_max_hamming + 1, 0
        return 0, 0

    # -- rounds -----------------------------------------------------------------------------------------------

    def _read_parts(self, table: str, part: int, schema: pa.Schema) -> pa.Table:
        """Part ``part`` of ``table`` as every sender sent it, in sender order."""
        return self._receive_with_senders(table, part, schema)[0]

    def _receive_with_senders(self, table: str, part: int, schema: pa.Schema) -> tuple[pa.Table, np.ndarray]:
        """Part ``part`` of ``table`` in sender order, and the sender of each row: from every sender's file, or
        from every sender group's merged file (`_merge`)."""
        shuffle = self.shuffle(table)
        levels = shuffle.levels
        if levels is None:
            tables = [storage.read_parquet_part(url, part) for url in shuffle.senders]
            senders = np.repeat(np.arange(len(tables), dtype=np.int32), [t.num_rows for t in tables])
        else:
            block, row_group = divmod(part, levels[0])
            _, groups = shuffle.merge_jobs()
            merged = [
                storage.read_parquet_part(self._url(f"{table}.merged", block, g), row_group) for g in range(groups)
            ]
            senders = np.concatenate([t.column(SENDER).to_numpy() for t in merged] or [np.zeros(0, np.int32)])
            tables = [t.drop_columns([SENDER]) for t in merged]
        return (pa.concat_tables(tables).cast(schema) if tables else schema.empty_table()), senders

    def _merge(self, job: ReduceJob) -> dict[str, Any]:
        """One job of a two-level shuffle: its block of receivers' row groups from its group of senders (one read
        of consecutive row groups per sender), written as one file with a row group per receiver of the block,
        each row marked with its sender."""
        shuffle = self.shuffle(job.round.removeprefix("merge_"))
        receivers, senders = shuffle.merge_job(job.index)
        block_index, group_index = divmod(job.index, shuffle.merge_jobs()[1])
        received = [storage.read_parquet_parts(shuffle.senders[s], receivers) for s in senders]
        merged = []
        for k in range(len(receivers)):
            tables = [rows[k] for rows in received]
            marks = [pa.array(np.full(t.num_rows, s, dtype=np.int32)) for s, t in zip(senders, tables, strict=True)]
            table = pa.concat_tables(tables)
            merged.append(table.append_column(SENDER, pa.chunked_array(marks, pa.int32())))
        storage.write_parquet_parts(self._url(f"{shuffle.name}.merged", block_index, group_index), merged)
        return {"rows": sum(t.num_rows for t in merged), "senders": len(senders), "receivers": len(receivers)}

    def _send(
        self, round_: str, sender: int, table: pa.Table, parts_of_rows: np.ndarray, parts: int | None = None
    ) -> None:
        """Write ``table``'s rows, split into the parts ``parts_of_rows`` names, as one file whose row group i
        holds part i (`storage.write_parquet_parts`)."""
        split = [rows for _, rows in _split(table, parts_of_rows, self.parts if parts is None else parts)]
        storage.write_parquet_parts(self._url(round_, sender), split)

    def _texts(self, job: ReduceJob) -> dict[str, Any]:
        part = job.index
        _check_unique(self._read_parts("ids", part, IDS).column("id"))
        docs, shard_of = self._receive_with_senders("keys", part, KEYED)
        lengths = docs.column("length").to_numpy()
        neg_length = -lengths if self.cfg.representative == "longest" else np.zeros_like(lengths)
        keys = docs.column("key").to_pylist()
        doc_ids = docs.column("id").to_pylist()
        earlier = self._earlier_texts(part)
        known = {key: row for row, key in enumerate(earlier.column("key").to_pylist())}
        first: dict[bytes, int] = {}  # key -> row of its first occurrence (input order), for texts new here
        best: dict[bytes, int] = {}  # key -> row of its best document
        counts: dict[bytes, int] = {}
        again = np.zeros(earlier.num_rows, dtype=np.int64)  # documents here of each earlier text
        for row, key in enumerate(keys):
            if key in known:
                again[known[key]] += 1
            elif key not in first:
                first[key] = best[key] = row
                counts[key] = 0
            elif (neg_length[row], doc_ids[row]) < (neg_length[best[key]], doc_ids[best[key]]):
                best[key] = row
            if key not in known:
                counts[key] += 1
        first_rows = pa.array(list(first.values()), pa.int64())
        best_rows = list(best.values())
        new = pa.table(
            {
                "key": docs.column("key").take(first_rows),
                "group": docs.column("group").take(first_rows),
                "neg_length": pa.array(neg_length[best_rows] if best_rows else [], pa.int64()),
                "best_id": pa.array([doc_ids[r] for r in best_rows], pa.string()),
                "docs": pa.array(list(counts.values()), pa.int64()),
                "shingle_count": docs.column("shingle_count").take(first_rows),
                "sketch": docs.column("sketch").take(first_rows),
                "shingles": docs.column("shingles").take(first_rows),
            },
            schema=TEXTS,
        )
        earlier = earlier.set_column(
            earlier.schema.get_field_index("docs"), "docs", pc.add(earlier.column("docs"), pa.array(again))
        )
        texts = pa.concat_tables([earlier.cast(TEXTS), new])
        storage.write_parquet(self._url("texts", part), texts)
        out = pa.table([docs.column("id"), docs.column("key"), pa.array(shard_of, pa.int32())], schema=DOCS)
        storage.write_parquet(self._url("docs", part), out)
        if self.cfg.method != "none":
            bands = self._band_rows(texts)
            self._send("bands", part, bands, part_of(_band_bytes(bands), self.parts))
        return {
            "documents": docs.num_rows,
            "distinct_texts": new.num_rows,
            "earlier_texts": earlier.num_rows,
            "earlier_texts_seen_again": int(np.count_nonzero(again)),
        }

    def _earlier_texts(self, part: int) -> pa.Table:
        """Part ``part`` of the previous build's texts (`dedup.previous_index`), ranked before every text of this
        build; empty without one."""
        if self.cfg.previous_index is None:
            return TEXTS.empty_table()
        index = read_index(self.cfg.previous_index, self.cfg)
        earlier = storage.read_parquet(index["texts"][part]).cast(TEXTS)
        shifted = pc.subtract(earlier.column("neg_length"), pa.scalar(EARLIER, pa.int64()))
        return earlier.set_column(earlier.schema.get_field_index("neg_length"), "neg_length", shifted).cast(TEXTS)

    def _band_rows(self, texts: pa.Table) -> pa.Table:
        """One row per sketched text and band, bands after each other: the band's value as bytes, compared whole
        as datasketch's hash tables compare them (texts without shingles are not banded)."""
        sizes = texts.column("shingle_count").fill_null(0).to_numpy()
        eligible = texts.filter(pa.array(sizes > 0))
        n = eligible.num_rows
        raw = b"".join(eligible.column("sketch").to_pylist())
        if self.cfg.method == "minhash":
            bands, rows = self._bands_and_rows()
            signatures = np.frombuffer(raw, dtype=np.uint32).reshape(n, self.cfg.num_perm)
            values = [np.ascontiguousarray(signatures[:, b * rows : (b + 1) * rows]) for b in range(bands)]
        else:
            fingerprints = np.frombuffer(raw, dtype=np.uint64)
            ranges = band_ranges(self.cfg.simhash_bits, self.cfg.simhash_max_hamming)
            values = [(fingerprints >> np.uint64(lo)) & np.uint64((1 << (hi - lo)) - 1) for lo, hi in ranges]
        width = values[0].itemsize * (values[0].shape[1] if values[0].ndim == 2 else 1) if values else 1
        flat = b"".join(v.tobytes() for v in values)
        value = pa.FixedSizeBinaryArray.from_buffers(pa.binary(width), len(values) * n, [None, pa.py_buffer(flat)])
        repeated = pa.array(np.tile(np.arange(n, dtype=np.int64), len(values)))
        return pa.table(
            {
                "group": eligible.column("group").take(repeated),
                "band": pa.array(np.repeat(np.arange(len(values), dtype=np.int32), n)),
                "value": value.cast(pa.binary()),
                "key": eligible.column("key").take(repeated),
                "neg_length": eligible.column("neg_length").take(repeated),
                "best_id": eligible.column("best_id").take(repeated),
                "shingle_count": eligible.column("shingle_count").take(repeated),
            },
            schema=BANDS,
        )

    def _candidates(self, job: ReduceJob) -> dict[str, Any]:
        bands = self._read_parts("bands", job.index, BANDS)
        order = pc.sort_indices(
            bands, [("group", "ascending"), ("band", "ascending"), ("value", "ascending"),
                    ("neg_length", "ascending"), ("best_id", "ascending")]
        )  # fmt: skip
        bands = bands.take(order)
        # Rows are sorted by rank within each bucket, so row numbers order a bucket's texts as their ranks do.
        bounds = _run_starts(bands, ["group", "band", "value"])
        runs = np.flatnonzero(np.diff(bounds) > 1)
        buckets = [np.arange(bounds[r], bounds[r + 1]) for r in runs.tolist()]
        pairs_of_rows = candidate_pairs(buckets, np.arange(bands.num_rows), self.cfg.full_pairs_limit)
        bucket_pairs = len(pairs_of_rows)
        if self.cfg.verify_candidates and self.cfg.verify_with == "jaccard":
            sizes = bands.column("shingle_count").to_numpy()
            pairs_of_rows = pairs_of_rows[_reachable(sizes[pairs_of_rows], self.cfg.similarity_threshold)]
        left, right = pa.array(pairs_of_rows[:, 0]), pa.array(pairs_of_rows[:, 1])
        a = bands.select(["key", "neg_length", "best_id"]).take(left)
        b = bands.select(["key", "neg_length", "best_id"]).take(right)
        pairs = pa.table(list(a.columns) + list(b.columns), schema=PAIRS)
        if self.cfg.previous_index is not None:  # two earlier texts were compared when their build ran
            newer = pc.greater(pairs.column("b_neg_length"), pa.scalar(-EARLIER // 2, pa.int64()))
            pairs = pairs.filter(newer)
        self._send("pairs", job.index, pairs, part_of(pairs.column("a_key").to_pylist(), self.parts))
        return {"bucket_pairs": bucket_pairs, "size_rejected_pairs": bucket_pairs - len(pairs_of_rows)}

    def _read_texts(self, part: int, columns: list[str]) -> pa.Table:
        return storage.read_parquet(self._url("texts", part), columns=["key", *columns])

    def _verify_left(self, job: ReduceJob) -> dict[str, Any]:
        """Each unique pair goes to its right text's part, and each left text's sketch once to every part its
        pairs go to (not once per pair: a family of near-copies pairs every member with dozens of others)."""
        pairs = _unique_pairs(self._read_parts("pairs", job.index, PAIRS))
        destination = part_of(pairs.column("b_key").to_pylist(), self.parts)
        self._send("half", job.index, pairs, destination)
        texts = self._read_texts(job.index, ["sketch", "shingles"])
        # Each (left text, destination part) once, ordered by text row then part.
        sent = np.unique(_rows_of(pairs.column("a_key"), texts.column("key")) * self.parts + destination)
        rows = pa.array(sent // self.parts, pa.int64())
        lefts = pa.table([texts.column(c).take(rows) for c in ("key", "sketch", "shingles")], schema=LEFTS)
        self._send("lefts", job.index, lefts, sent % self.parts)
        return {"candidate_pairs": pairs.num_rows}

    def _verify_right(self, job: ReduceJob) -> dict[str, Any]:
        pairs = self._read_parts("half", job.index, PAIRS)
        if self.cfg.verify_candidates and pairs.num_rows:
            lefts = self._read_parts("lefts", job.index, LEFTS)
            texts = self._read_texts(job.index, ["sketch", "shingles"])
            a = _rows_of(pairs.column("a_key"), lefts.column("key"))
            b = _rows_of(pairs.column("b_key"), texts.column("key"))
            similarity = self._pair_similarity(lefts, a, texts, b)
            pairs = pairs.filter(pa.array(similarity >= self.cfg.similarity_threshold))
        forward = pairs.rename_columns(EDGES.names)
        backward = pairs.select([n.replace("a_", "x_").replace("b_", "a_").replace("x_", "b_") for n in PAIRS.names])
        edges = pa.concat_tables([forward, backward.rename_columns(EDGES.names)])
        self._send("edges", job.index, edges, part_of(edges.column("src_key").to_pylist(), self.parts))
        return {"verified_pairs": pairs.num_rows}

    def _pair_similarity(self, lefts: pa.Table, a: np.ndarray, rights: pa.Table, b: np.ndarray) -> np.ndarray:
        """Similarity of each pair (row ``a[i]`` of ``lefts``, row ``b[i]`` of ``rights``) by `verify_with`: exact
        Jaccard of the shingle sets, or the sketch's estimate; no sketch is copied per pair."""
        if self.cfg.verify_with == "jaccard":
            return kernels.pair_jaccard(
                *_csr_lists(lefts.column("shingles")), *_csr_lists(rights.column("shingles")), a, b
            )
        dtype = np.uint32 if self.cfg.method == "minhash" else np.uint64
        left = np.frombuffer(b"".join(lefts.column("sketch").to_pylist()), dtype=dtype).reshape(lefts.num_rows, -1)
        right = np.frombuffer(b"".join(rights.column("sketch").to_pylist()), dtype=dtype).reshape(rights.num_rows, -1)
        out = np.empty(len(a), dtype=np.float64)
        for lo in range(0, len(a), _PAIR_CHUNK):
            i, j = a[lo : lo + _PAIR_CHUNK], b[lo : lo + _PAIR_CHUNK]
            if self.cfg.method == "minhash":
                out[lo : lo + len(i)] = (left[i] == right[j]).mean(axis=1)
            else:
                distance = np.bitwise_count(np.bitwise_xor(left[i, 0], right[j, 0]))
                out[lo : lo + len(i)] = 1.0 - distance.astype(np.float64) / self.cfg.simhash_bits
        return out

    def _labels(self, number: int, part: int) -> pa.Table:
        """Labels after ``number`` propagation rounds; round 0 starts from each text's best neighbour or itself."""
        if number > 0:
            return storage.read_parquet(self._url(f"labels_{number}", part)).cast(LABELS)
        edges = self._read_parts("edges", part, EDGES)
        own = edges.select(["src_key", "src_neg_length", "src_id", "src_key"]).rename_columns(LABELS.names)
        neighbours = edges.select(["src_key", "dst_neg_length", "dst_id", "dst_key"]).rename_columns(LABELS.names)
        return _best_label(pa.concat_tables([own, neighbours]))

    def _send_step(self, job: ReduceJob) -> dict[str, Any]:
        number = int(job.round.split("_")[1])
        labels = self._labels(number, job.index)
        edges = self._read_parts("edges", job.index, EDGES)
        rows = pa.array(_rows_of(edges.column("src_key"), labels.column("key")), pa.int64())
        messages = pa.table(
            [edges.column("dst_key"), *(labels.column(c).take(rows) for c in LABELS.names[1:])], schema=MESSAGES
        )
        self._send(f"messages_{number}", job.index, messages, part_of(edges.column("dst_key").to_pylist(), self.parts))
        return {"messages": messages.num_rows}

    def _min_step(self, job: ReduceJob) -> dict[str, Any]:
        number = int(job.round.split("_")[1])
        labels = self._labels(number, job.index)
        messages = self._read_parts(f"messages_{number}", job.index, MESSAGES)
        updated = _best_label(pa.concat_tables([labels, messages]))
        storage.write_parquet(self._url(f"labels_{number + 1}", job.index), updated)
        before = dict(zip(labels.column("key").to_pylist(), labels.column("label_key").to_pylist(), strict=True))
        after = updated.column("label_key").to_pylist()
        changed = sum(before[k] != label for k, label in zip(updated.column("key").to_pylist(), after, strict=True))
        return {"changed": changed}

    def _final_labels(self, part: int) -> pa.Table:
        number = sum(1 for round_ in self.rounds() if round_.startswith("min_"))
        return self._labels(number, part)

    def _gather(self, job: ReduceJob) -> dict[str, Any]:
        labels = self._final_labels(job.index)
        texts = self._read_texts(job.index, ["neg_length", "best_id", "docs", "sketch", "shingles"])
        rows = pa.array(_rows_of(labels.column("key"), texts.column("key")), pa.int64())
        members = pa.table(
            [labels.column("label_key"), labels.column("key")]
            + [texts.column(c).take(rows) for c in ("neg_length", "best_id", "docs", "sketch", "shingles")],
            schema=MEMBERS,
        )
        self._send("members", job.index, members, part_of(labels.column("label_key").to_pylist(), self.parts))
        return {"members": members.num_rows}

    def _guard(self, job: ReduceJob) -> dict[str, Any]:
        members = self._read_parts("members", job.index, MEMBERS)
        order = pc.sort_indices(
            members, [("label_key", "ascending"), ("neg_length", "ascending"), ("best_id", "ascending")]
        )
        members = members.take(order)
        keys, ids = members.column("key").to_pylist(), members.column("best_id").to_pylist()
        earlier = (members.column("neg_length").to_numpy() < -EARLIER // 2).tolist()
        docs = members.column("docs").to_numpy()
        sets = _csr_lists(members.column("shingles"))
        sketches = members.column("sketch").to_pylist()
        floor = self.cfg.similarity_threshold - self.cfg.guard_margin
        out: dict[str, list[Any]] = {name: [] for name in ROOTS.names}
        splits = below = 0
        for lo, hi in itertools.pairwise(_run_starts(members, ["label_key"]).tolist()):
            if hi - lo < 2:
                continue
            similarity = self._similarity_among(sets, sketches, lo, hi)
            roots, split = split_loose_clusters(
                np.zeros(hi - lo, dtype=np.int64), np.arange(hi - lo), similarity, floor
            )
            splits += split
            sizes = np.bincount(roots, weights=docs[lo:hi], minlength=hi - lo).astype(np.int64)
            for member, root in enumerate(roots.tolist()):
                if member != root:
                    below += int(similarity(root, np.array([member]))[0] < self.cfg.similarity_threshold)
                out["key"].append(keys[lo + member])
                out["root_key"].append(keys[lo + root])
                out["root_id"].append(ids[lo + root])
                out["size"].append(int(sizes[root]))
                out["root_earlier"].append(earlier[lo + root])
        roots_table = pa.table(out, schema=ROOTS)
        self._send("roots", job.index, roots_table, part_of(out["key"], self.parts))
        return {"guard_splits": splits, "below_threshold": below}

    def _similarity_among(
        self, sets: tuple[np.ndarray, np.ndarray], sketches: list[bytes], lo: int, hi: int
    ) -> Callable[[int, np.ndarray], np.ndarray]:
        """Similarity of one member of the cluster `lo:hi` (rows of `sets`, `sketches`) to others (indices into
        the cluster), by `verify_with`."""
        if self.cfg.verify_with == "jaccard":
            return lambda doc, others: kernels.pair_jaccard(
                *sets, *sets, np.full(len(others), lo + doc, dtype=np.int64), lo + np.asarray(others, dtype=np.int64)
            )
        sketches = sketches[lo:hi]
        if self.cfg.method == "minhash":
            signatures = np.frombuffer(b"".join(sketches), dtype=np.uint32).reshape(len(sketches), -1)
            return functools.partial(estimated_jaccard, signatures)
        fingerprints = np.frombuffer(b"".join(sketches), dtype=np.uint64)
        return lambda doc, others: hamming_similarity(fingerprints, doc, others, self.cfg.simhash_bits)

    def _assemble(self, job: ReduceJob) -> dict[str, Any]:
        part = job.index
        docs = storage.read_parquet(self._url("docs", part)).cast(DOCS)
        texts = self._read_texts(part, ["best_id", "docs", "neg_length"])
        where = {key: row for row, key in enumerate(texts.column("key").to_pylist())}
        roots = self._read_parts("roots", part, ROOTS) if self.cfg.method != "none" else ROOTS.empty_table()
        root_of = {k: r for r, k in enumerate(roots.column("key").to_pylist())}
        best_ids, text_docs = texts.column("best_id").to_pylist(), texts.column("docs").to_pylist()
        root_keys, root_ids, sizes = (roots.column(c).to_pylist() for c in ("root_key", "root_id", "size"))
        ids, keys = docs.column("id").to_pylist(), docs.column("key").to_pylist()
        representative, size, reason = [], [], []
        text_earlier = (texts.column("neg_length").to_numpy() < -EARLIER // 2).tolist()
        root_earlier = roots.column("root_earlier").to_pylist()
        of_earlier = 0  # documents dropped as duplicates of an earlier build's text
        for doc_id, key in zip(ids, keys, strict=True):
            r = root_of.get(key)
            if r is None:
                rep, n, same, earlier = best_ids[where[key]], text_docs[where[key]], True, text_earlier[where[key]]
            else:
                rep, n, same, earlier = root_ids[r], sizes[r], key == root_keys[r], root_earlier[r]
            of_earlier += int(earlier and doc_id != rep)
            representative.append(rep)
            size.append(n)
            reason.append(None if doc_id == rep else EXACT_DUPLICATE if same else NEAR_DUPLICATE)
        table = pa.table([ids, representative, pa.array(size, pa.int32()), reason], schema=CLUSTERS)
        shards = docs.column("shard").to_numpy().astype(np.int64)
        self._send("assembled", part, table, shards, parts=len(self.partials))
        kept = np.array([r is None for r in reason], dtype=bool)
        size_array = np.array(size, dtype=np.int64)
        is_exact = np.array([r == EXACT_DUPLICATE for r in reason], dtype=bool)
        return {
            "exact_duplicates": int(is_exact.sum()),
            "near_duplicates": int((~kept & ~is_exact).sum()),
            "clusters": int((kept & (size_array > 1)).sum()),
            "largest_cluster": int(size_array.max(initial=0)),
            "duplicates_of_earlier": of_earlier,
        }

    def _by_shard(self, job: ReduceJob) -> dict[str, Any]:
        table = self._read_parts("assembled", job.index, CLUSTERS).sort_by("id")
        storage.write_parquet(self._url("clusters", job.index), table)
        return {"documents": table.num_rows}


def index_settings(cfg: DedupConfig) -> dict[str, Any]:
    """The settings a previous build's index must share with this one: how texts are keyed, shingled, sketched and
    split into parts (the threshold, guard and representative rule may differ)."""
    names = ("exact", "scope", "ignore", "method", "shingle", "word_ngram", "char_ngram", "min_unspaced_share",
             "num_perm", "seed", "simhash_bits", "verify_with", "partitions")  # fmt: skip
    return cfg.model_dump(mode="json", include=set(names))


def read_index(url: str, cfg: DedupConfig) -> dict[str, Any]:
    """A previous build's dedup index (its fit's ``index.json``), checked against this build's settings."""
    if not storage.exists(url):
        raise ValueError(f"dedup.previous_index: no index at {url} (a dedup fit directory's index.json)")
    index: dict[str, Any] = storage.read_json(url)
    if index.get("format") != INDEX_FORMAT:
        raise ValueError(f"dedup.previous_index: {url} is not a {INDEX_FORMAT} file")
    differing = sorted(k for k, v in index_settings(cfg).items() if index["settings"].get(k) != v)
    if differing:
        raise ValueError(
            f"dedup.previous_index: {url} was built with other {', '.join(differing)}; an index can only be matched "
            "by a build that keys, shingles, sketches and partitions texts the same way"
        )
    return index


def _run_starts(table: pa.Table, columns: list[str]) -> np.ndarray:
    """Where each run of equal ``columns`` values starts in a table sorted by them, and its end (row count)."""
    n = table.num_rows
    differs = np.zeros(max(n - 1, 0), dtype=bool)
    for name in columns:
        column = table.column(name)
        if n > 1:
            differs |= pc.not_equal(column.slice(1), column.slice(0, n - 1)).to_numpy(zero_copy_only=False)
    return np.concatenate(([0], np.flatnonzero(differs) + 1, [n])).astype(np.int64) if n else np.zeros(1, np.int64)


def _reachable(counts: np.ndarray, threshold: float) -> np.ndarray:
    """Which pairs of shingle-set sizes (an (n, 2) array) can reach `threshold`: a pair's Jaccard is at most the
    smaller set's size over the larger's, and rounding is monotone, so a pair below the threshold by this bound
    is below it by its exact Jaccard too and is dropped as verification would drop it."""
    small, large = counts.min(axis=1), counts.max(axis=1)
    return small / np.maximum(large, 1) >= threshold


def _band_bytes(bands: pa.Table) -> list[bytes]:
    groups, numbers, values = (bands.column(c).to_pylist() for c in ("group", "band", "value"))
    return [g.encode() + b"\x00" + n.to_bytes(4, "little") + v for g, n, v in zip(groups, numbers, values, strict=True)]


def _unique_pairs(pairs: pa.Table) -> pa.Table:
    """Each (a, b) pair once (a pair can share several bands), ordered by a then b."""
    order = pc.sort_indices(
        pairs,
        [("a_neg_length", "ascending"), ("a_id", "ascending"), ("b_neg_length", "ascending"), ("b_id", "ascending")],
    )
    pairs = pairs.take(order)
    return pairs.take(pa.array(_run_starts(pairs, ["a_id", "b_id"])[:-1]))


def _best_label(labels: pa.Table) -> pa.Table:
    """Per text, the best-ranked label among its rows, texts in key order."""
    order = pc.sort_indices(
        labels, [("key", "ascending"), ("label_neg_length", "ascending"), ("label_id", "ascending")]
    )
    labels = labels.take(order)
    return labels.take(pa.array(_run_starts(labels, ["key"])[:-1])).cast(LABELS)


def _rows_of(keys: pa.ChunkedArray, among: pa.ChunkedArray) -> np.ndarray:
    """The row of each key in `among`, where every key occurs exactly once (a text's key in its part's tables)."""
    if pc.count_distinct(among).as_py() != len(among):
        raise ValueError("dedup: a key occurs twice in one part's table")
    rows = pc.index_in(keys, value_set=among)
    if rows.null_count:
        raise KeyError(f"dedup: {rows.null_count} key(s) missing from the part they were sent to")
    return np.asarray(rows.to_numpy(zero_copy_only=False), dtype=np.int64)


def _csr_lists(column: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """A list<uint64> column as its values and row offsets (a null row is empty), for `kernels.pair_jaccard`."""
    array = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    if not len(array):
        return np.zeros(0, dtype=np.uint64), np.zeros(1, dtype=np.int64)
    offsets = array.offsets.to_numpy().astype(np.int64)
    return array.flatten().to_numpy(zero_copy_only=False), offsets - offsets[0]


def _check_unique(ids: pa.ChunkedArray) -> None:
    counts = pc.value_counts(ids).flatten()
    repeated = pc.filter(counts[0], pc.greater(counts[1], 1)).to_pylist()
    if repeated:
        raise ValueError(f"dedup: {len(repeated)} document ids occur more than once, e.g. {sorted(repeated)[:3]}")
