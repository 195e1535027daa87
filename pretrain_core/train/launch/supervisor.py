"""Supervise one training run: torchrun in a thread, its checkpoints announced and evaluated as they land.

The orchestration layer (a Prefect task, a script) plugs in what it does with each event through `SupervisorHooks`
and otherwise only calls `TrainingSupervisor.run`. Training runs in a supervisor thread while the caller's thread
watches for checkpoints. A cancellation reaches the caller's thread as an exception (Prefect delivers it as SIGTERM);
torchrun's process tree lives in its own session, out of the caller's reach, so the watcher sets the run's cancel
event and waits until the tree is gone before letting the exception through.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from pretrain_core.train.checkpoint.catalog import completed_checkpoints
from pretrain_core.train.checkpoint.records import announced_steps, mark_announced
from pretrain_core.train.checkpoint.resume import completed_run
from pretrain_core.train.config import TrainConfig
from pretrain_core.train.launch.torchrun import run_torchrun, torchrun_command, write_config
from pretrain_core.train.observe.monitor import TrainingMonitor
from pretrain_core.train.parallel.planner import GIB, check_fits
from pretrain_core.train.shards.tokenizer import load_tokenizer

# Workers get this long to checkpoint and exit after SIGTERM; under Prefect's 30 s before its runner SIGKILLs us.
TERMINATE_GRACE_S = 20.0


def _no_progress(percent: float, text: str) -> None:
    """No progress display: the log lines carry the same figures."""


@dataclass(frozen=True)
class SupervisorHooks:
    """What the caller does with a run's events. ``line`` is called from a reader thread with every worker line;
    ``announce(step, url)`` answers whether the announcement was delivered (undelivered ones are tried again by the
    run's next attempt); ``evaluate(url)`` runs in a thread of its own, one checkpoint at a time."""

    line: Callable[[str], object]
    announce: Callable[[int, str], bool]
    progress: Callable[[float, str], object] = _no_progress
    evaluate: Callable[[str], Any] | None = None


def announce_unannounced(output_url: str, announced: set[int], announce: Callable[[int, str], bool]) -> list[str]:
    """Announce every complete checkpoint not in ``announced`` (which it extends), oldest first, and record each
    delivered one durably; return their urls."""
    fresh = [(step, url) for step, url in completed_checkpoints(output_url) if step not in announced]
    for step, url in fresh:
        announced.add(step)
        if announce(step, url):
            mark_announced(output_url, step)
    return [url for _, url in fresh]


def _await_termination(supervisor: Future[int]) -> None:
    """Wait for the supervisor to finish tearing the tree down, even through repeated signals."""
    while not supervisor.done():
        try:
            wait([supervisor])
        except BaseException:  # a second SIGTERM or Ctrl-C must not abandon the tree half-terminated
            continue


class TrainingSupervisor:
    """One run of ``cfg`` under torchrun (it resumes from the newest checkpoint), reported through ``hooks``.

    ``stop_when(step, validation_loss)`` sees every validation loss as it is logged; when it answers True the run is
    stopped as on SIGTERM (the workers save and exit), which is how a sweep prunes a trial.
    """

    def __init__(
        self,
        cfg: TrainConfig,
        name: str,
        hooks: SupervisorHooks,
        logger: logging.Logger | logging.LoggerAdapter[Any],
        timeout_s: float | None = None,
        stop_when: Callable[[int, float], bool] | None = None,
        poll_s: float = 2.0,
    ) -> None:
        self.cfg, self.name, self.hooks, self.log = cfg, name, hooks, logger
        self.timeout_s, self.stop_when, self.poll_s = timeout_s, stop_when, poll_s
        self.monitor = TrainingMonitor(cfg.max_steps)
        self.cancel = threading.Event()
        self.announced = announced_steps(cfg.output_url)  # what earlier attempts delivered
        self.evaluations: list[Future[Any]] = []

    def run(self) -> list[str]:
        """Train to the end (or to the stop asked for); return the completed checkpoints' urls. A failed run raises
        with the first failing worker's exception."""
        cfg = self.cfg
        if (done := completed_run(cfg)) is not None:
            self.log.info("%s already trained to step %d under this config: nothing to do", self.name, done["steps"])
            announce_unannounced(cfg.output_url, self.announced, self.hooks.announce)  # killed after its last save
            return [url for _, url in completed_checkpoints(cfg.output_url)]
        if cfg.launch.gpu_memory_gib is not None:  # refused here, before any process starts, when it cannot fit
            tokenizer, _ = load_tokenizer(cfg.data.tokenizer_url)
            estimate = check_fits(cfg, tokenizer.get_piece_size() + (cfg.model.objective == "masked"))
            self.log.info(
                "estimated peak %.1f GiB per GPU (of %g): fits", estimate.peak / GIB, cfg.launch.gpu_memory_gib
            )
        self.hooks.progress(100 * max(self.announced, default=0) / cfg.max_steps, f"starting under {cfg.output_url}")
        code = self._supervise()
        if code != 0 and self.stop_when is not None and self.cancel.is_set():  # torchrun reports the SIGTERM
            self.log.info("%s stopped at step %d as asked (torchrun exit code %d)", self.name, self.monitor.step, code)
        elif code != 0:
            failure = self.monitor.failure()
            self.log.error("torchrun exited with code %d; the workers' first error: %s", code, failure)
            raise RuntimeError(f"training {self.name} failed (torchrun exit code {code}): {failure}")
        checkpoints = [url for _, url in completed_checkpoints(cfg.output_url)]
        self.log.info("training finished: %d checkpoints under %s", len(checkpoints), cfg.output_url)
        return checkpoints

    def _supervise(self) -> int:
        """torchrun's exit code, with every checkpoint announced (and evaluated) as it lands."""
        env = {"OMP_NUM_THREADS": str(self.cfg.launch.num_threads), "OMP_WAIT_POLICY": "PASSIVE"}
        command = torchrun_command(self.cfg, write_config(self.cfg))
        shown = ""
        with (
            ThreadPoolExecutor(max_workers=1, thread_name_prefix="evaluate") as evaluator,
            ThreadPoolExecutor(max_workers=1, thread_name_prefix="torchrun") as pool,
        ):
            supervisor = pool.submit(
                run_torchrun, command, env, self.timeout_s, self.cancel, TERMINATE_GRACE_S, "torchrun", self._on_line
            )
            try:
                while True:
                    wait([supervisor], timeout=self.poll_s)
                    finished = supervisor.done()  # read before the last look, so no checkpoint is missed
                    self._announce_new(evaluator)
                    if (summary := self.monitor.summary()) != shown:
                        shown = summary
                        self.hooks.progress(100 * self.monitor.step / self.cfg.max_steps, summary)
                    if finished:
                        break
            except BaseException:
                self.log.warning("training of %s interrupted: terminating torchrun's process tree", self.name)
                self.cancel.set()
                _await_termination(supervisor)
                self._announce_new(evaluator)  # the checkpoint saved on SIGTERM is evaluated like any other
                evaluator.shutdown(wait=False, cancel_futures=True)
                raise
            code = supervisor.result()
        for evaluation in self.evaluations:  # a failure is recorded beside the checkpoint, reported by the flow
            if (error := evaluation.exception()) is not None:
                self.log.warning("evaluation during training failed: %s: %s", type(error).__name__, error)
        return code

    def _on_line(self, line: str) -> None:
        """The reader thread's: every worker line to the caller, validation losses to ``stop_when``."""
        point = self.monitor.feed(line)
        self.hooks.line(line)
        if self.stop_when is None or point is None or "val_loss" not in point.values or self.cancel.is_set():
            return
        if self.stop_when(point.step, point.values["val_loss"]):
            self.log.info("stopping %s at step %d: its caller asked to", self.name, point.step)
            self.cancel.set()

    def _announce_new(self, evaluator: ThreadPoolExecutor) -> None:
        for url in announce_unannounced(self.cfg.output_url, self.announced, self.hooks.announce):
            if self.hooks.evaluate is not None:
                self.evaluations.append(evaluator.submit(self.hooks.evaluate, url))
