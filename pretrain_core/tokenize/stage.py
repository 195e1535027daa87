"""Tokenize one mixture shard and pack it into training sequences, one stream per (split, domain).

Every document's split comes from the global assignment made before the mixture (``fit_splits``), so no document
straddles splits. Held-out splits take each document once: the mixture plans one copy of each, and any further copy
(``repeat_index > 0``, e.g. a mixture output fed to a standalone run under other splits) is dropped
(``heldout_repeat``). Inside a stream, documents (and copies) are ordered by a seeded hash of
(id, repeat_index), which keeps copies of a document apart; each stream is packed on its own, so every
sequence has one domain. Output: train, validation, test; inside a split, the sequences of all domains in a
seeded shuffled order.

A document's ids come with it from the mixture (``token_ids``, encoded once when the mixture counted its tokens)
wherever they decode back to its text exactly; only the others are encoded here.

Stats per shard: ``tokens_<domain>_<split>`` (ids in the stream, BOS/EOS included), ``sequences_<split>``,
``tokens_discarded_tail`` (each stream's remainder after its last full window, under ``seq_len`` ids per
stream and shard; documents lying wholly in it are dropped as ``pack_tail``), and ``documents_ids_reused`` /
``documents_encoded`` (distinct documents whose carried ids were used / that were encoded here).
"""

from __future__ import annotations

from itertools import pairwise
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import sentencepiece as spm

from pretrain_core.card.stats import BYTES_BY_LANGUAGE, TOKENS_BY_LANGUAGE, TOKENS_BY_SOURCE
from pretrain_core.schema import TOKEN_IDS, TOKENS, dropped_schema
from pretrain_core.stage import ShardOutput
from pretrain_core.tokenize.config import PackConfig
from pretrain_core.tokenize.encode import encode_batch, load_tokenizer
from pretrain_core.tokenize.keys import doc_key
from pretrain_core.tokenize.pack import PackedStream, concatenate_documents, dominant_documents, pack_stream
from pretrain_core.tokenize.splits import SPLITS, SplitBoundaries, load_boundaries

if TYPE_CHECKING:
    from pretrain_core.config import PipelineConfig

HELDOUT_REPEAT = "heldout_repeat"
PACK_TAIL = "pack_tail"


class TokenizeStage:
    """Per-shard stage from ``PackConfig`` and the artifacts of ``fit_tokenizer`` + ``fit_splits``; picklable."""

    name = "tokenize"
    schema = TOKENS

    def __init__(self, cfg: PackConfig, artifacts: dict[str, str]) -> None:
        self.cfg = cfg
        self.tokenizer_url = artifacts["tokenizer"]
        self.splits_url = artifacts["splits"]
        self._tokenizer: spm.SentencePieceProcessor | None = None
        self._splits: SplitBoundaries | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_tokenizer": None, "_splits": None}

    def tokenizer(self) -> spm.SentencePieceProcessor:
        if self._tokenizer is None:
            self._tokenizer = load_tokenizer(self.tokenizer_url)
        return self._tokenizer

    def splits(self) -> SplitBoundaries:
        if self._splits is None:
            self._splits = load_boundaries(self.splits_url)
        return self._splits

    def process(self, table: pa.Table) -> ShardOutput:
        ids = np.asarray(table.column("id").to_pylist(), dtype=object)
        domains = np.asarray(table.column("domain").to_pylist(), dtype=object)
        sources = np.asarray(table.column("source").to_pylist(), dtype=object)
        licences = np.asarray(table.column("licence").to_pylist(), dtype=object)
        buckets = np.asarray(table.column("quality_bucket").to_pylist(), dtype=object)
        scores = table.column("quality_score").to_numpy().astype(np.float32)
        splits = self._split_of(table)
        repeat_index = table.column("repeat_index").to_numpy()
        heldout_copy = (splits != SPLITS[0]) & (repeat_index > 0)
        tokens, doc_of_row, reused = self._encode_unique(table, ids)
        keys = [
            doc_key(self.cfg.order_seed, f"{doc_id}#{copy}") for doc_id, copy in zip(ids, repeat_index, strict=True)
        ]
        order = np.asarray(sorted(range(len(ids)), key=lambda r: (keys[r], r)), dtype=np.int64)
        documents = {"id": ids, "domain": domains, "source": sources, "licence": licences, "split": splits,
                     "quality_bucket": buckets, "quality_score": scores}  # fmt: skip
        dropped = [_dropped_rows(heldout_copy, documents, HELDOUT_REPEAT)]
        stats: dict[str, float] = {f"sequences_{s}": 0.0 for s in SPLITS} | {"tokens_discarded_tail": 0.0}
        stats |= {"documents_ids_reused": float(reused), "documents_encoded": float(len(tokens) - reused)}
        stats |= _card_stats(table, tokens, doc_of_row, ~heldout_copy)
        sequences: list[pa.Table] = []
        for split_index, split in enumerate(SPLITS):
            streams: list[pa.Table] = []
            for domain, bucket in self._streams(domains, buckets):
                in_stream = (splits == split) & (domains == domain) & ~heldout_copy
                if bucket is not None:
                    in_stream &= buckets == bucket
                rows = order[in_stream[order]]
                if not len(rows):
                    continue
                stream, offsets = concatenate_documents(tokens.take(pa.array(doc_of_row[rows])), *self._frame())
                packed = pack_stream(stream, offsets, self.cfg.seq_len)
                dominant = rows[dominant_documents(packed, offsets, self.cfg.seq_len)]
                quality = (buckets[dominant], scores[dominant])
                streams.append(_sequences(packed, ids[rows], sources[dominant], licences[rows], quality, domain, split))
                tail = rows[packed.tail_docs]
                dropped.append(_dropped_rows(tail, documents, PACK_TAIL))
                stats[f"tokens_{domain}_{split}"] = float(len(stream))
                stats[f"sequences_{split}"] += len(packed.windows)
                stats["tokens_discarded_tail"] += packed.tail_tokens
            if streams:
                sequences.append(_shuffled(pa.concat_tables(streams), self.cfg.order_seed, split_index))
        kept = pa.concat_tables(sequences) if sequences else TOKENS.empty_table()
        return ShardOutput(kept.cast(TOKENS), pa.concat_tables(dropped).cast(dropped_schema(TOKENS)), stats)

    def _streams(self, domains: np.ndarray, buckets: np.ndarray) -> list[tuple[str, str | None]]:
        """The streams packed apart: one per domain, or per domain and quality bucket (`pack.by_quality_bucket`)."""
        if not self.cfg.by_quality_bucket:
            return [(domain, None) for domain in sorted(set(domains.tolist()))]
        return sorted(set(zip(domains.tolist(), buckets.tolist(), strict=True)))

    def _frame(self) -> tuple[int | None, int | None]:
        """The ids put around every document: (BOS or None, EOS or None)."""
        tokenizer = self.tokenizer()
        return (tokenizer.bos_id() if self.cfg.add_bos else None, tokenizer.eos_id() if self.cfg.add_eos else None)

    def _split_of(self, table: pa.Table) -> np.ndarray:
        return self.splits().split_of(table.column("id").to_pylist(), table.column("domain").to_pylist())

    def _encode_unique(self, table: pa.Table, ids: np.ndarray) -> tuple[pa.ListArray, np.ndarray, int]:
        """Token ids of each distinct document once (copies share them), the document index of every row, and how
        many documents' ids came with them (`_token_ids`)."""
        carried = table.column(TOKEN_IDS.name) if TOKEN_IDS.name in table.column_names else None
        carries = np.zeros(len(ids), dtype=bool)
        if carried is not None:
            carries = carried.is_valid().to_numpy(zero_copy_only=False)
        index_of: dict[str, int] = {}
        chosen_rows: list[int] = []  # per document, its first row, or its first with ids (the first copy's)
        doc_of_row = np.empty(len(ids), dtype=np.int64)
        for row, doc_id in enumerate(ids):
            index = index_of.get(doc_id)
            if index is None:
                index_of[doc_id] = index = len(chosen_rows)
                chosen_rows.append(row)
            elif carries[row] and not carries[chosen_rows[index]]:
                chosen_rows[index] = row
            doc_of_row[row] = index
        chosen = pa.array(chosen_rows, pa.int64())
        texts = table.column("text").take(chosen).to_pylist()
        tokens, reused = self._token_ids(texts, None if carried is None else carried.take(chosen))
        return tokens, doc_of_row, reused

    def _token_ids(self, texts: list[str], carried: pa.ChunkedArray | None) -> tuple[pa.ListArray, int]:
        """Each text's ids and how many were reused: those it carries from the mixture's count where they decode
        back to it exactly (ids of another tokenizer do not), the rest encoded here. Decoding costs about a fifth
        of encoding."""
        tokenizer = self.tokenizer()
        reused = np.zeros(len(texts), dtype=bool)
        if carried is not None and carried.null_count < len(carried):
            known = np.flatnonzero(carried.is_valid().to_numpy(zero_copy_only=False))
            ids = carried.take(pa.array(known)).combine_chunks()
            values = ids.flatten().to_numpy()
            outside = (values < 0) | (values >= tokenizer.get_piece_size())  # not this vocabulary's ids
            doc_of_value = np.repeat(np.arange(len(known)), ids.value_lengths().to_numpy())
            spellable = np.flatnonzero(np.bincount(doc_of_value[outside], minlength=len(known)) == 0)
            decoded = tokenizer.decode(ids.take(pa.array(spellable)).to_pylist())
            rows = known[spellable].tolist()
            reused[rows] = [back == texts[row] for row, back in zip(rows, decoded, strict=True)]
        reused_rows, encode_rows = np.flatnonzero(reused), np.flatnonzero(~reused)
        encoded = encode_batch(tokenizer, [texts[row] for row in encode_rows.tolist()], self.cfg.num_threads)
        if carried is None or not len(reused_rows):
            return encoded, 0
        both = pa.concat_arrays([carried.take(pa.array(reused_rows)).combine_chunks(), encoded])
        position = np.empty(len(texts), dtype=np.int64)
        position[reused_rows] = np.arange(len(reused_rows))
        position[encode_rows] = len(reused_rows) + np.arange(len(encode_rows))
        return both.take(pa.array(position)), len(reused_rows)


def _sequences(
    packed: PackedStream,
    doc_ids: np.ndarray,
    sources: np.ndarray,
    doc_licences: np.ndarray,
    quality: tuple[np.ndarray, np.ndarray],
    domain: str,
    split: str,
) -> pa.Table:
    """One row per packed window: its ids, its documents, its dominant document's source and quality (bucket,
    score), and every licence among them."""
    n = len(packed.windows)
    flat = packed.doc_indices.flatten().to_numpy()
    names = pa.array(doc_ids.tolist(), pa.string()).take(flat)
    offsets = packed.doc_indices.offsets.to_numpy()
    per_window = doc_licences[flat]
    licences = [sorted(set(per_window[start:end].tolist())) for start, end in pairwise(offsets)]
    return pa.table(
        {
            "input_ids": packed.windows,
            "domain": pa.array([domain] * n, pa.string()),
            "source": pa.array(sources.tolist(), pa.string()),
            "licences": pa.array(licences, pa.list_(pa.string())),
            "doc_ids": pa.ListArray.from_arrays(packed.doc_indices.offsets, names),
            "split": pa.array([split] * n, pa.string()),
            "quality_bucket": pa.array(quality[0].tolist(), pa.string()),
            "quality_score": pa.array(quality[1], pa.float32()),
        }
    )


def _card_stats(table: pa.Table, tokens: pa.ListArray, doc_of_row: np.ndarray, packed: np.ndarray) -> dict[str, float]:
    """Document tokens of the ``packed`` rows (copies counted) by source and language, and their UTF-8 bytes by
    language: the card's tokens by source and language, and the tokenizer's bytes per token (Arrow's group-by:
    no Python per document)."""
    keep = pa.array(packed)
    rows = pa.table(
        {
            "source": table.column("source").filter(keep),
            "lang": table.column("lang").filter(keep),
            "tokens": tokens.value_lengths().to_numpy(zero_copy_only=False)[doc_of_row][packed],
            "bytes": pc.binary_length(table.column("text")).filter(keep),
        }
    )
    stats: dict[str, float] = {}
    wanted = [("source", "tokens", TOKENS_BY_SOURCE), ("lang", "tokens", TOKENS_BY_LANGUAGE)]
    for column, measure, prefix in [*wanted, ("lang", "bytes", BYTES_BY_LANGUAGE)]:
        grouped = rows.group_by(column).aggregate([(measure, "sum")])
        sums = zip(grouped[column].to_pylist(), grouped[f"{measure}_sum"].to_pylist(), strict=True)
        stats |= {f"{prefix}/{value}": float(total) for value, total in sums}
    return dict(sorted(stats.items()))


def _shuffled(sequences: pa.Table, seed: int, split_index: int) -> pa.Table:
    """Domains interleaved in a seeded order, so any prefix of a held-out split (what evaluation reads first)
    holds every domain in proportion."""
    return sequences.take(np.random.default_rng([seed, split_index]).permutation(sequences.num_rows))


def _dropped_rows(rows: np.ndarray, documents: dict[str, np.ndarray], reason: str) -> pa.Table:
    """The documents at ``rows`` (indices or a mask) as dropped rows, one each; ``documents`` holds each
    document's id, domain, source, licence, split, quality bucket and score."""
    n = len(documents["id"][rows])
    return pa.table(
        {
            "input_ids": pa.array([[]] * n, pa.list_(pa.int32())),
            "domain": pa.array(documents["domain"][rows].tolist(), pa.string()),
            "source": pa.array(documents["source"][rows].tolist(), pa.string()),
            "licences": pa.array([[licence] for licence in documents["licence"][rows].tolist()], pa.list_(pa.string())),
            "doc_ids": pa.array([[i] for i in documents["id"][rows].tolist()], pa.list_(pa.string())),
            "split": pa.array(documents["split"][rows].tolist(), pa.string()),
            "quality_bucket": pa.array(documents["quality_bucket"][rows].tolist(), pa.string()),
            "quality_score": pa.array(documents["quality_score"][rows], pa.float32()),
            "drop_reason": pa.array([reason] * n, pa.string()),
        }
    )


def settings_of(cfg: PipelineConfig) -> dict[str, Any]:
    return {"pack": cfg.pack}


def build_stage(cfg: PipelineConfig, artifacts: dict[str, str]) -> TokenizeStage:
    return TokenizeStage(cfg.pack, artifacts)
