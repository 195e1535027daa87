"""Stage manifests: what went in, what came out, what was dropped and why, under which config and code.

A shard's record is written after its outputs, and the stage manifest after every shard, so each is also the
completion marker of the work it describes.
"""

from __future__ import annotations

import functools
import hashlib
import json
import subprocess
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from pretrain_core import __version__, storage


class ShardRecord(BaseModel):
    """One unit of work: a shard's inputs, outputs and counts."""

    key: str
    config_hash: str
    inputs: list[str]
    outputs: list[str]
    docs_in: int
    docs_out: int
    dropped: dict[str, int] = Field(default_factory=dict)
    stats: dict[str, float] = Field(default_factory=dict)
    bytes_in: int = 0
    bytes_out: int = 0
    seconds: float = 0.0

    def relative_to(self, base: str) -> ShardRecord:
        """This record as written under the folder ``base``: URLs within the build relative to it."""
        return self.model_copy(update=_urls_moved(self, lambda url: storage.relative_to(url, base)))

    def resolved(self, base: str) -> ShardRecord:
        """This record as read from under ``base``: its relative URLs made whole again."""
        return self.model_copy(update=_urls_moved(self, lambda url: storage.resolved(url, base)))


class StageManifest(BaseModel):
    """The whole stage: the aggregate of its shard records plus anything the stage fitted globally."""

    stage: str
    config_hash: str
    code_version: str
    config: dict[str, Any]
    inputs: list[str]
    outputs: list[str]
    docs_in: int
    docs_out: int
    dropped: dict[str, int]
    stats: dict[str, float]
    bytes_in: int
    bytes_out: int
    seconds: float  # wall time of the stage: its fits (`fit_seconds`) and its shards
    shards: list[ShardRecord]
    artifacts: dict[str, str] = Field(default_factory=dict)  # name -> URL of what the stage fitted
    facts: dict[str, str] = Field(default_factory=dict)  # identities of fitted state, e.g. tokenizer_sha256
    fit_seconds: float = 0.0  # wall time of the stage's fit and the shared fits it uses, when they ran


def _urls_moved(model: ShardRecord | StageManifest, move: Callable[[str], str]) -> dict[str, Any]:
    """The URL fields of a record or manifest, each URL passed through ``move``."""
    update: dict[str, Any] = {"inputs": [move(u) for u in model.inputs], "outputs": [move(u) for u in model.outputs]}
    if isinstance(model, StageManifest):
        update["artifacts"] = {name: move(url) for name, url in model.artifacts.items()}
        update["shards"] = [record.model_copy(update=_urls_moved(record, move)) for record in model.shards]
    return update


def config_hash(stage: str, config: Any, upstream: str = "") -> str:
    """Hash of a stage's resolved config chained with its upstream hash, so upstream changes invalidate it."""
    payload = json.dumps({"stage": stage, "config": config, "upstream": upstream}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


@functools.cache
def code_version() -> str:
    """Package version plus the git commit when running from a checkout."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return f"{__version__}+{commit}" if commit else __version__


def _combine(key: str, total: float | None, value: float) -> float:
    """Shard stats add up, except extremes (`largest_*`, `max_*`, `min_*`), which take the extreme."""
    if total is None:
        return value
    if key.startswith(("largest_", "max_")):
        return max(total, value)
    if key.startswith("min_"):
        return min(total, value)
    return total + value


def aggregate(
    stage: str,
    hash_: str,
    config: dict[str, Any],
    records: list[ShardRecord],
    seconds: float,
    artifacts: dict[str, str] | None = None,
    facts: dict[str, str] | None = None,
    fit_seconds: float = 0.0,
) -> StageManifest:
    dropped: Counter[str] = Counter()
    stats: dict[str, float] = {}
    for record in records:
        dropped.update(record.dropped)
        for key, value in record.stats.items():
            stats[key] = _combine(key, stats.get(key), value)
    return StageManifest(
        stage=stage,
        config_hash=hash_,
        code_version=code_version(),
        config=config,
        inputs=[url for r in records for url in r.inputs],
        outputs=[url for r in records for url in r.outputs],
        docs_in=sum(r.docs_in for r in records),
        docs_out=sum(r.docs_out for r in records),
        dropped=dict(sorted(dropped.items())),
        stats=dict(sorted(stats.items())),
        bytes_in=sum(r.bytes_in for r in records),
        bytes_out=sum(r.bytes_out for r in records),
        seconds=round(seconds, 3),
        shards=sorted(records, key=lambda r: r.key),
        artifacts=artifacts or {},
        facts=facts or {},
        fit_seconds=round(fit_seconds, 3),
    )


def write_manifest(url: str, manifest: StageManifest) -> None:
    """Written with URLs within the build relative to the manifest's folder (`storage.relative_to`)."""
    base = url.rsplit("/", 1)[0]
    moved = manifest.model_copy(update=_urls_moved(manifest, lambda u: storage.relative_to(u, base)))
    storage.write_json(url, moved.model_dump(mode="json"))


def read_manifest(url: str) -> StageManifest:
    """A manifest with its relative URLs resolved against where it lies now, wherever the build was written."""
    base = url.rsplit("/", 1)[0]
    manifest = StageManifest.model_validate(storage.read_json(url))
    return manifest.model_copy(update=_urls_moved(manifest, lambda u: storage.resolved(u, base)))
