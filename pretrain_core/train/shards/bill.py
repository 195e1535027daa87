"""The bill of materials of a run: the tokens it was fed, per domain, source, licence and quality bucket, counted
from the global stream of sequences every rank computes alike (so no rank has to tell another), saved with each
checkpoint."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from pretrain_core.train.shards.sequences import Sequences

KINDS = ("domain", "source", "licence", "quality_bucket")


@dataclass
class Bill:
    """Input tokens (``seq_len`` per sequence: what the model reads) per kind and value, and sequences in all. A
    sequence packing documents of several licences counts under each of them."""

    sequences: int = 0
    tokens: int = 0
    by: dict[str, Counter[str]] = field(default_factory=lambda: {kind: Counter() for kind in KINDS})

    @staticmethod
    def from_dict(saved: dict[str, Any] | None) -> Bill:
        if not saved:
            return Bill()
        return Bill(
            int(saved["sequences"]),
            int(saved["tokens"]),
            {kind: Counter({k: int(v) for k, v in saved["by"].get(kind, {}).items()}) for kind in KINDS},
        )

    def add(self, sequences: Sequences, rows: np.ndarray) -> None:
        """Count the global micro-batch ``rows`` (every rank's share)."""
        per_sequence = int(sequences.ids.shape[1]) - 1
        self.sequences += int(rows.size)
        self.tokens += per_sequence * int(rows.size)
        columns = (("domain", sequences.domains), ("source", sequences.sources), ("quality_bucket", sequences.buckets))
        for kind, column in columns:
            values, counts = np.unique(column[rows], return_counts=True)
            self.by[kind].update({str(v): per_sequence * int(c) for v, c in zip(values, counts, strict=True)})
        for row in rows.tolist():
            for licence in sequences.licences[row]:
                self.by["licence"][licence] += per_sequence

    def as_dict(self) -> dict[str, Any]:
        return {
            "sequences": self.sequences,
            "tokens": self.tokens,
            "by": {kind: dict(sorted(self.by[kind].items())) for kind in KINDS},
        }
