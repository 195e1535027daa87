"""Progress of mapped shard work in the Prefect UI: a progress artifact moved as shards finish."""

from __future__ import annotations

from typing import TypeVar
from uuid import UUID

from prefect.artifacts import create_progress_artifact, update_progress_artifact
from prefect.futures import PrefectFutureList, as_completed

R = TypeVar("R")


def artifact_key(*parts: str) -> str:
    """Artifact keys allow lowercase letters, digits and dashes only."""
    return "-".join(parts).lower().replace("_", "-").replace(".", "-")


def results_with_progress(futures: PrefectFutureList[R], key: str, description: str) -> list[R]:
    """Wait for every future, moving the `key` progress artifact by whole percents, then return their results in
    order (raising the first failure, as `futures.result()` does)."""
    progress = create_progress_artifact(progress=0.0, key=key, description=description)
    assert isinstance(progress, UUID)  # a sync call returns the id, not a coroutine
    total = len(futures)
    shown = 0
    for done, _ in enumerate(as_completed(list(futures)), start=1):
        percent = 100 * done // total
        if percent > shown:  # one API call per percent, not per shard
            update_progress_artifact(progress, progress=float(percent))
            shown = percent
    return futures.result()
