"""The supervisor without any orchestrator: a real tiny run under torchrun, its events seen through plain hooks."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import pytest

from pretrain_core.train.checkpoint.records import announced_steps
from pretrain_core.train.config import TrainConfig
from pretrain_core.train.launch.supervisor import SupervisorHooks, TrainingSupervisor

LOG = logging.getLogger("test-supervisor")


class Recorder:
    """Hooks that remember what they were told; announcements of ``refuse`` steps are not delivered."""

    def __init__(self, refuse: frozenset[int] = frozenset()) -> None:
        self.lines: list[str] = []
        self.announced: list[tuple[int, str]] = []
        self.evaluated: list[str] = []
        self.progress: list[float] = []
        self.refuse = refuse
        self.threads: set[str] = set()

    def hooks(self) -> SupervisorHooks:
        def evaluate(url: str) -> None:
            self.threads.add(threading.current_thread().name)
            self.evaluated.append(url)

        def announce(step: int, url: str) -> bool:
            self.announced.append((step, url))
            return step not in self.refuse

        return SupervisorHooks(
            line=self.lines.append,
            announce=announce,
            progress=lambda percent, _text: self.progress.append(percent),
            evaluate=evaluate,
        )


def test_every_checkpoint_is_announced_and_evaluated_once_in_order_and_lines_reach_the_caller(
    tiny_config: Callable[..., TrainConfig],
) -> None:
    config = tiny_config(max_steps=6, checkpoint_every=2, keep_last_checkpoints=6)
    seen = Recorder(refuse=frozenset({4}))
    checkpoints = TrainingSupervisor(config, "supervised", seen.hooks(), LOG, poll_s=0.2).run()
    steps = [step for step, _ in seen.announced]
    assert steps == [2, 4, 6] and [url for _, url in seen.announced] == checkpoints
    assert seen.evaluated == checkpoints and all(name.startswith("evaluate") for name in seen.threads)
    assert any("step 6/6" in line for line in seen.lines)
    assert seen.progress[-1] == pytest.approx(100.0)
    assert announced_steps(config.output_url) == {2, 6}  # the undelivered one is left for the next attempt
    again = Recorder()
    assert TrainingSupervisor(config, "supervised", again.hooks(), LOG).run() == checkpoints  # nothing to train
    assert [step for step, _ in again.announced] == [4] and again.lines == []


def test_a_failing_run_raises_with_the_workers_error(tiny_config: Callable[..., TrainConfig]) -> None:
    config = tiny_config(tokens_url=tiny_config().output_url + "-no-shards-here")
    with pytest.raises(RuntimeError, match=r"exit code 1.*FileNotFoundError: no token shards"):
        TrainingSupervisor(config, "broken", Recorder().hooks(), LOG, poll_s=0.2).run()
