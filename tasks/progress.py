"""Progress of mapped shard work where people look: a progress artifact in the Prefect UI, moved as tasks (groups of
shards) finish, and a progress bar in the terminal that started the flow (when it is one)."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import TypeVar
from uuid import UUID

from prefect.artifacts import create_progress_artifact, update_progress_artifact
from prefect.futures import PrefectFutureList, as_completed
from tqdm import tqdm

R = TypeVar("R")


def artifact_key(*parts: str) -> str:
    """Artifact keys allow lowercase letters, digits and dashes only."""
    return "-".join(parts).lower().replace("_", "-").replace(".", "-")


def results_with_progress(
    futures: PrefectFutureList[R], key: str, description: str, jobs: Sequence[int] | None = None
) -> list[R]:
    """Wait for every future, moving the `key` progress artifact by whole percents and telling in its description
    how many jobs are done (`jobs[i]`: how many future i runs, one each by default), the documents per second
    (for shard records, or lists of them) and the time left, and a terminal progress bar with the same (on stderr,
    only when it is a terminal); then return their results in order (raising the first failure, as
    `futures.result()` does)."""
    progress = create_progress_artifact(progress=0.0, key=key, description=description)
    assert isinstance(progress, UUID)  # a sync call returns the id, not a coroutine
    pending = list(futures)
    size_of = {id(future): size for future, size in zip(pending, jobs or [1] * len(pending), strict=True)}
    total, started, done, documents = sum(size_of.values()), time.monotonic(), 0, 0
    shown = 0
    with tqdm(total=total, desc=description, unit="job", disable=not sys.stderr.isatty(), leave=True) as bar:
        for future in as_completed(pending):
            done += size_of[id(future)]
            documents += _documents(future.result(raise_on_failure=False))
            seconds = time.monotonic() - started
            bar.update(size_of[id(future)])
            if documents and seconds > 0:
                bar.set_postfix_str(f"{documents:,} docs, {documents / seconds:,.0f} docs/s", refresh=False)
            percent = 100 * done // total
            if percent > shown:  # one API call per percent, not per shard
                note = progress_note(done, total, documents, seconds)
                update_progress_artifact(progress, progress=float(percent), description=f"{description}: {note}")
                shown = percent
    return futures.result()


def _documents(result: object) -> int:
    """Documents read by a shard record, or by a list of them (a group's); 0 for anything else."""
    records = result if isinstance(result, list) else [result]
    return sum(getattr(record, "docs_in", 0) for record in records)


def progress_note(done: int, total: int, documents: int, seconds: float) -> str:
    """ "12 of 40, 35,120 docs at 2,310 docs/s, about 1 min 4 s left" (documents only when counted)."""
    rate = f", {documents:,} docs at {documents / seconds:,.0f} docs/s" if documents and seconds > 0 else ""
    left = seconds / done * (total - done) if done else 0.0
    minutes, secs = divmod(round(left), 60)
    eta = f"about {minutes} min {secs} s left" if minutes else f"about {secs} s left"
    return f"{done} of {total}{rate}, {eta if done < total else 'done'}"
