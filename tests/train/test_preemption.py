from __future__ import annotations

import os
import signal
import threading
import time

from pretrain_core.train.checkpoint.preemption import stop_on_sigterm


def test_sigterm_sets_the_stop_flag_instead_of_killing_and_the_old_handler_comes_back() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with stop_on_sigterm(threading.Event()) as stop:
        os.kill(os.getpid(), signal.SIGTERM)
        deadline = time.monotonic() + 5
        while not stop.is_set() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert stop.is_set()
    assert signal.getsignal(signal.SIGTERM) == before


def test_outside_the_main_thread_the_flag_is_returned_untouched() -> None:
    seen: list[bool] = []

    def worker() -> None:
        with stop_on_sigterm(threading.Event()) as stop:
            seen.append(stop.is_set())

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert seen == [False]
