"""The library's log records reach the log of the run they happen in, read back from a real Prefect API."""

from __future__ import annotations

import logging
import time
import warnings

import pytest
from prefect import flow, task
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId
from prefect.runtime import flow_run

import tasks  # noqa: F401  (importing the package forwards the library's logs)

LIBRARY = logging.getLogger("pretrain_core.tokenize.train")


@task
def shrink_vocabulary() -> None:
    LIBRARY.warning("library warning inside a task")
    LIBRARY.info("library info inside a task")


@pytest.mark.usefixtures("prefect_harness")
def test_library_records_join_the_runs_log_and_stay_quiet_outside_runs() -> None:
    @flow
    def run() -> str:
        shrink_vocabulary()
        LIBRARY.warning("library warning inside the flow")
        return str(flow_run.get_id())

    flow_run_id = run()
    messages: list[str] = []
    deadline = time.monotonic() + 30
    while len(messages) < 3 and time.monotonic() < deadline:  # logs are shipped in batches
        with get_client(sync_client=True) as client:
            logs = client.read_logs(log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[flow_run_id])))
        messages = [log.message for log in logs if log.message.startswith("library ")]
        time.sleep(0.5)
    assert sorted(messages) == [
        "library info inside a task",
        "library warning inside a task",
        "library warning inside the flow",
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Prefect warns when a record for the API has no run: ours are not sent
        LIBRARY.warning("library warning outside any run")
