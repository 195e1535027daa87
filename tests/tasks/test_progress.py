"""The progress artifact of mapped work, read back from a real Prefect API."""

from __future__ import annotations

import pytest
from prefect import flow, task
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

from tasks.progress import artifact_key, progress_note, results_with_progress


@task
def square(x: int) -> int:
    return x * x


@task
def squares(xs: list[int]) -> list[int]:
    return [x * x for x in xs]


@task
def fail_on(x: int, bad: int) -> int:
    if x == bad:
        raise ValueError(f"shard {x} is broken")
    return x


def test_artifact_keys_keep_to_the_allowed_characters() -> None:
    assert artifact_key("Demo_Run", "v1.2", "progress") == "demo-run-v1-2-progress"


@pytest.mark.usefixtures("prefect_harness")
def test_results_come_back_in_order_and_the_bar_reaches_100() -> None:
    @flow
    def mapped() -> list[int]:
        return results_with_progress(square.map(list(range(7))), "progress-test-squares", "squares")

    assert mapped() == [x * x for x in range(7)]
    with get_client(sync_client=True) as client:
        (artifact,) = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["progress-test-squares"]))
        )
    assert artifact.type == "progress" and artifact.data == 100.0
    assert artifact.description == "squares: 7 of 7, done"  # squares are not shard records: no document count


@pytest.mark.usefixtures("prefect_harness")
def test_tasks_that_run_groups_of_jobs_count_jobs_not_tasks() -> None:
    groups = [[0, 1, 2], [3, 4], [5]]

    @flow
    def mapped() -> list[list[int]]:
        return results_with_progress(squares.map(groups), "progress-test-groups", "groups", [3, 2, 1])

    assert mapped() == [[0, 1, 4], [9, 16], [25]]
    with get_client(sync_client=True) as client:
        (artifact,) = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["progress-test-groups"]))
        )
    assert artifact.data == 100.0 and artifact.description == "groups: 6 of 6, done"


@pytest.mark.usefixtures("prefect_harness")
def test_a_failed_shard_is_raised_not_swallowed() -> None:
    @flow
    def mapped() -> list[int]:
        return results_with_progress(fail_on.map(list(range(4)), bad=2), "progress-test-failing", "failing")

    with pytest.raises(ValueError, match="shard 2 is broken"):
        mapped()


def test_the_progress_note_gives_the_rate_and_the_time_left() -> None:
    assert progress_note(10, 40, 23_100, 10.0) == "10 of 40, 23,100 docs at 2,310 docs/s, about 30 s left"
    assert progress_note(12, 40, 0, 32.0) == "12 of 40, about 1 min 15 s left"
    assert progress_note(40, 40, 5_000, 20.0) == "40 of 40, 5,000 docs at 250 docs/s, done"
