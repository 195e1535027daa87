"""The trainer's saves: synchronous, or in the background while training goes on (a save waits only for the one
before it), each completed (manifest, pruning, callbacks) as soon as its shards are written."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.distributed as dist
from torch import nn

from pretrain_core.train.checkpoint.dcp_format import staging_buffer
from pretrain_core.train.checkpoint.store import SaveInFlight, finish_save, start_save
from pretrain_core.train.parallel.distributed import DistEnv

log = logging.getLogger(__name__)

CheckpointCallback = Callable[[str, int], None]


class Checkpointer:
    """Every rank holds one. With ``background``, DCP's collectives of a save run on a gloo group of their own (made
    here, a collective), so they never interleave with training's on the default group."""

    def __init__(
        self,
        output_url: str,
        background: bool,
        env: DistEnv,
        on_checkpoint: Sequence[CheckpointCallback] = (),
    ) -> None:
        self.output_url, self.background, self.is_main = output_url, background, env.is_main
        self.on_checkpoint = on_checkpoint
        self.group = dist.new_group(backend="gloo") if background and dist.is_initialized() else None
        self.stager = staging_buffer(env.device) if background else None
        self.in_flight: SaveInFlight | None = None
        self.started = 0.0
        self.last_blocked_s = 0.0  # how long the newest save held training up

    def save(
        self,
        step: int,
        model: nn.Module,
        optimizer: torch.optim.Optimizer,
        scheduler: torch.optim.lr_scheduler.LRScheduler,
        meta: dict[str, Any],
        tokenizer_proto: bytes | None,
        ephemeral: bool = False,
    ) -> None:
        """Collective. Start a save of ``step`` once the previous one is complete; synchronous saves are complete
        when this returns. The callbacks see permanent checkpoints only (an ephemeral one is for recovery)."""
        began = time.perf_counter()
        self.wait()
        self.started = time.perf_counter()
        saving = start_save(
            self.output_url, step, model, optimizer, scheduler, meta, tokenizer_proto, self.background, self.group,
            ephemeral, self.stager,
        )  # fmt: skip
        if self.background:
            self.in_flight = saving
        else:
            self._complete(saving)
        self.last_blocked_s = time.perf_counter() - began

    def poll(self) -> None:
        """Complete the save in flight if its shards are written; cheap enough to call every step."""
        if self.in_flight is not None and self.in_flight.done():
            self.wait()

    def wait(self) -> None:
        """Block until the save in flight (if any) is complete."""
        if self.in_flight is not None:
            saving, self.in_flight = self.in_flight, None
            self._complete(saving)

    def close(self) -> None:
        """Complete the save in flight and free the staging buffer."""
        self.wait()
        if self.stager is not None:
            self.stager.close()
            self.stager = None

    def _complete(self, saving: SaveInFlight) -> None:
        url = finish_save(saving)
        if self.is_main:
            kind = "ephemeral checkpoint" if saving.ephemeral else "checkpoint"
            log.info("written in %.2f s: %s %s", time.perf_counter() - self.started, kind, url)
            for callback in () if saving.ephemeral else self.on_checkpoint:
                callback(url, saving.step)
