"""Progress of mapped shard work in the Prefect UI: a progress artifact moved as shards finish."""

from __future__ import annotations

import time
from typing import TypeVar
from uuid import UUID

from prefect.artifacts import create_progress_artifact, update_progress_artifact
from prefect.futures import PrefectFutureList, as_completed

R = TypeVar("R")


def artifact_key(*parts: str) -> str:
    """Artifact keys allow lowercase letters, digits and dashes only."""
    return "-".join(parts).lower().replace("_", "-").replace(".", "-")


def results_with_progress(futures: PrefectFutureList[R], key: str, description: str) -> list[R]:
    """Wait for every future, moving the `key` progress artifact by whole percents and telling in its description
    how many are done, the documents per second (for shard records) and the time left, then return their results
    in order (raising the first failure, as `futures.result()` does)."""
    progress = create_progress_artifact(progress=0.0, key=key, description=description)
    assert isinstance(progress, UUID)  # a sync call returns the id, not a coroutine
    total, started, documents = len(futures), time.monotonic(), 0
    shown = 0
    for done, future in enumerate(as_completed(list(futures)), start=1):
        documents += getattr(future.result(raise_on_failure=False), "docs_in", 0)
        percent = 100 * done // total
        if percent > shown:  # one API call per percent, not per shard
            note = progress_note(done, total, documents, time.monotonic() - started)
            update_progress_artifact(progress, progress=float(percent), description=f"{description}: {note}")
            shown = percent
    return futures.result()


def progress_note(done: int, total: int, documents: int, seconds: float) -> str:
    """ "12 of 40, 35,120 docs at 2,310 docs/s, about 1 min 4 s left" (documents only when counted)."""
    rate = f", {documents:,} docs at {documents / seconds:,.0f} docs/s" if documents and seconds > 0 else ""
    left = seconds / done * (total - done) if done else 0.0
    minutes, secs = divmod(round(left), 60)
    eta = f"about {minutes} min {secs} s left" if minutes else f"about {secs} s left"
    return f"{done} of {total}{rate}, {eta if done < total else 'done'}"
