"""The cut-off sample's scores, kept from the fit so that no document is scored twice.

The fit scores a seeded sample of every bucket key under the model that will score it in its shard (to place
the cut-offs). On a small corpus that sample is most of the corpus, and on any corpus it is up to
`cutoff_sample_docs` documents per key: the shards take those documents' scores from here instead of scoring them
again. A document's scores do not depend on the batch it was scored in (each line is tokenised alone and each
document's log-probabilities are summed in token order), so the taken scores are the same bits a shard would
compute. Each entry carries a digest of the text it was computed on: a document is taken only with its own text.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from pretrain_core.quality.scoring import Components

SCHEMA = pa.schema(
    [
        ("model", pa.string()),
        ("id", pa.string()),
        ("text_digest", pa.uint64()),
        ("lexical", pa.float64()),
        ("skeleton", pa.float64()),
        ("kept_share", pa.float64()),
    ]
)


def text_digest(text: str) -> int:
    """A 64-bit digest of a document's text."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")


def sample_table(model: str, ids: Sequence[str], texts: Sequence[str], components: Components) -> pa.Table:
    """One model's scored sample (its documents' components), in `SCHEMA`."""
    return pa.table(
        {
            "model": pa.array([model] * len(ids), pa.string()),
            "id": pa.array(list(ids), pa.string()),
            "text_digest": pa.array([text_digest(text) for text in texts], pa.uint64()),
            **{name: pa.array(values, pa.float64()) for name, values in components._asdict().items()},
        },
        schema=SCHEMA,
    )


@dataclass(frozen=True)
class SampleScores:
    """Per model, id -> (text digest, its `Components` values)."""

    by_model: dict[str, dict[str, tuple[int, float, float, float]]]

    @classmethod
    def from_table(cls, table: pa.Table) -> SampleScores:
        """The table's scores; none from a table of an older schema (a fit made before the kept-word share was
        kept), whose documents are then scored in their shards."""
        by_model: dict[str, dict[str, tuple[int, float, float, float]]] = {}
        if table.schema.names != SCHEMA.names:
            return cls(by_model)
        columns = (table.column(name).to_pylist() for name in SCHEMA.names)
        for model, doc_id, digest, lexical, skeleton, kept_share in zip(*columns, strict=True):
            by_model.setdefault(model, {})[doc_id] = (digest, lexical, skeleton, kept_share)
        return cls(by_model)

    def take(self, model: str, ids: Sequence[str], texts: Sequence[str]) -> tuple[np.ndarray, Components]:
        """Which documents have scores here (bool per document) and their components (NaN where none)."""
        known = self.by_model.get(model, {})
        found = np.zeros(len(ids), dtype=bool)
        values = Components(*(np.full(len(ids), np.nan) for _ in Components._fields))
        for row, doc_id in enumerate(ids):
            entry = known.get(doc_id)
            if entry is not None and entry[0] == text_digest(texts[row]):
                found[row] = True
                for column, value in zip(values, entry[1:], strict=True):
                    column[row] = value
        return found, values
