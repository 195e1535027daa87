"""Which documents of a batch overlap the index, and what redaction leaves of one."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from pretrain_core.batches import size_batches
from pretrain_core.decontam.config import HELDOUT_SET, DecontamConfig
from pretrain_core.decontam.index import NgramIndex
from pretrain_core.decontam.ngrams import ngram_hashes, normalised, unit_spans, window_ends
from pretrain_core.dedup.config import DedupConfig, Ignorable

_BATCH_CHARS = 4_000_000  # characters normalised and hashed at once: bounds the per-batch arrays


@dataclass(frozen=True)
class Overlap:
    """One document's overlap: the n-gram starts (unit indices) found and the sets holding them (with how many)."""

    starts: np.ndarray
    set_counts: dict[str, int]

    @property
    def main_set(self) -> str:
        """The set with the most overlapping n-grams (by name on ties): the one a dropped document is charged to."""
        return min(self.set_counts, key=lambda name: (-self.set_counts[name], name))


def find_overlaps(
    texts: pa.Array, index: NgramIndex, cfg: DecontamConfig, dedup: DedupConfig, stats: Counter[str] | None = None
) -> dict[int, Overlap]:
    """The overlap of every document (by row) that shares at least one n-gram with the index, less the held-out
    split's boilerplate (`boilerplate`); ``stats`` counts the matches that boilerplate rule set aside."""
    lengths = np.asarray(pa.compute.utf8_length(texts).to_numpy(zero_copy_only=False), dtype=np.int64)
    rows, starts, set_ids, hashes = [], [], [], []
    for lo, hi in size_batches(lengths.tolist(), _BATCH_CHARS):
        grams = ngram_hashes(normalised(texts.slice(lo, hi - lo), dedup.ignore), cfg.ngram, cfg.unspaced_chars_per_word)
        matches = index.lookup(grams.hashes)
        docs = grams.doc_of[matches.positions]
        rows.append(lo + docs)
        starts.append(matches.positions - grams.offsets[docs])
        set_ids.append(matches.set_ids)
        hashes.append(grams.hashes[matches.positions])
    if not rows or not sum(r.size for r in rows):
        return {}
    row, start, set_id, hashed = (np.concatenate(parts) for parts in (rows, starts, set_ids, hashes))
    if HELDOUT_SET in index.sets and cfg.heldout_boilerplate_docs is not None:
        heldout = set_id == index.sets.index(HELDOUT_SET)
        common = boilerplate(row[heldout], hashed[heldout], cfg.heldout_boilerplate_docs)
        keep = ~(heldout & np.isin(hashed, common))
        if stats is not None:
            stats["heldout_boilerplate_matches"] += int((~keep).sum())
        row, start, set_id = row[keep], start[keep], set_id[keep]
    order = np.argsort(row, kind="stable")
    row, start, set_id = row[order], start[order], set_id[order]
    found: dict[int, Overlap] = {}
    bounds = np.flatnonzero(np.concatenate(([True], row[1:] != row[:-1], [True])))
    for lo, hi in itertools.pairwise(bounds.tolist()):
        ids, counts = np.unique(set_id[lo:hi], return_counts=True)
        by_set = {index.sets[int(s)]: int(c) for s, c in zip(ids, counts, strict=True)}
        found[int(row[lo])] = Overlap(np.unique(start[lo:hi]), by_set)
    return found


def boilerplate(rows: np.ndarray, hashes: np.ndarray, max_docs: int) -> np.ndarray:
    """The n-grams found in more than ``max_docs`` of these documents: text a domain repeats (translation credits,
    licence footers, navigation), which a held-out document shares with many training ones without leaking."""
    pairs = np.unique(np.stack([hashes, rows.astype(np.uint64)]), axis=1)
    found, docs = np.unique(pairs[0], return_counts=True)
    return found[docs > max_docs]


def redacted(text: str, overlap: Overlap, cfg: DecontamConfig, ignore: Collection[Ignorable]) -> str | None:
    """The text with each overlapping n-gram and ``redact_margin_chars`` either side cut out, the pieces left
    joined by blank lines; None when the units cannot be lined up with the text or too little is left."""
    lined_up = unit_spans(text, ignore)
    if lined_up is None:
        return None
    units, spans = lined_up
    ends = window_ends(units, cfg.ngram, cfg.unspaced_chars_per_word)
    if any(k >= len(ends) for k in overlap.starts.tolist()):
        return None
    margin = cfg.redact_margin_chars
    cuts = _merged(
        [
            (max(spans[k][0] - margin, 0), min(spans[ends[k] - 1][1] + margin, len(text)))
            for k in overlap.starts.tolist()
        ]
    )
    pieces, last = [], 0
    for start, end in cuts:
        pieces.append(text[last:start].strip())
        last = end
    pieces.append(text[last:].strip())
    left = "\n\n".join(p for p in pieces if p)
    return left if len(left) >= max(cfg.min_remaining_chars, 1) else None


def _merged(spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged
