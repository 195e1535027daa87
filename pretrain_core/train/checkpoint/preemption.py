"""SIGTERM → "save and stop at the next step boundary", instead of dying mid-step with hours of work lost.

Schedulers (Slurm, Kubernetes, torchrun itself) send SIGTERM before killing. The handler only sets a flag;
the training loop checks it between steps, agrees with the other ranks, checkpoints and exits.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


@contextmanager
def stop_on_sigterm(stop: threading.Event) -> Iterator[threading.Event]:
    """Set ``stop`` on SIGTERM while the block runs (main thread only); restore the old handler after."""
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = signal.signal(signal.SIGTERM, request_stop)
    try:
        yield stop
    finally:
        signal.signal(signal.SIGTERM, previous)
