"""The library's own log records in the Prefect UI.

`pretrain_core` never imports Prefect: it logs through the standard `logging` module (the tokenizer's "vocabulary
shrunk to fit" warning, the evaluator's, the root lock's), and Prefect sends only its run loggers' records to the
API. Prefect's API handler on the `pretrain_core` logger puts them in the log of the flow or task run they happen
in; outside a run (a test, `pretrain stage`) the handler stays silent instead of warning about a missing run.
"""

from __future__ import annotations

import functools
import logging

from prefect.context import FlowRunContext, TaskRunContext
from prefect.logging.handlers import APILogHandler

LIBRARY_LOGGER = "pretrain_core"


class _InRun(logging.Filter):
    """Passes records logged inside a flow or task run, whose log they join."""

    def filter(self, record: logging.LogRecord) -> bool:
        return TaskRunContext.get() is not None or FlowRunContext.get() is not None


@functools.cache
def forward_library_logs() -> None:
    """Send `pretrain_core`'s INFO and higher records to the run they are logged in (once per process)."""
    handler = APILogHandler(level=logging.INFO)
    handler.addFilter(_InRun())
    library = logging.getLogger(LIBRARY_LOGGER)
    library.addHandler(handler)
    if library.level == logging.NOTSET:
        library.setLevel(logging.INFO)
