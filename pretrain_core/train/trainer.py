"""The training loop, torchtitan style: build everything (resuming from the latest checkpoint), train, always
clean up. Launched once per process, by torchrun or directly; a run killed at step k and restarted produces the
same losses at every later step as an uninterrupted run.
"""

from __future__ import annotations

import logging
import math
import random
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import torch.distributed as dist

from pretrain_core import storage
from pretrain_core.manifest import code_version
from pretrain_core.train.allocator import keep_freed_memory
from pretrain_core.train.checkpoint.catalog import latest_checkpoint, read_meta, resolve_checkpoint
from pretrain_core.train.checkpoint.checkpointer import CheckpointCallback, Checkpointer
from pretrain_core.train.checkpoint.preemption import stop_on_sigterm
from pretrain_core.train.checkpoint.records import unevaluated_checkpoints
from pretrain_core.train.checkpoint.resume import check_resumable, extending
from pretrain_core.train.checkpoint.store import load_checkpoint, load_model, unsharded_copy
from pretrain_core.train.config import TrainConfig
from pretrain_core.train.model.objective import masking_of
from pretrain_core.train.numerics import grad_scaler
from pretrain_core.train.observe.environment import environment, pitfalls
from pretrain_core.train.observe.grad_check import gradient_check
from pretrain_core.train.observe.run_observer import RunObserver
from pretrain_core.train.parallel.distributed import (
    DistEnv,
    all_reduce_sum,
    cleanup_distributed,
    init_distributed,
)
from pretrain_core.train.parallel.parallelize import parallelize
from pretrain_core.train.shards.provenance import corpus_provenance
from pretrain_core.train.shards.sequences import load_sequences
from pretrain_core.train.shards.tokenizer import tokenizer_from_proto
from pretrain_core.train.step import PhaseTimer, StepResult, Update, losses_by_domain, train_step, validation_loss

log = logging.getLogger(__name__)


@dataclass
class TrainResult:
    """What this process did: `completed` (reached max_steps) or `stopped` (SIGTERM / stop event, saved)."""

    status: str
    step: int
    losses: dict[int, float] = field(default_factory=dict)  # global mean train loss of each step run here
    summary: dict[str, Any] = field(default_factory=dict)


def train(
    config: TrainConfig, on_checkpoint: Sequence[CheckpointCallback] = (), stop: threading.Event | None = None
) -> TrainResult:
    """Train until max_steps or until ``stop`` is set (SIGTERM sets it too), checkpointing on the way out.

    ``on_checkpoint(url, step)`` runs on rank 0 after each checkpoint is complete.
    """
    torch.set_num_threads(config.launch.num_threads)
    keep_freed_memory()
    env = init_distributed(config.launch.backend, layout=config.layout)
    try:
        with stop_on_sigterm(stop or threading.Event()) as stop_event:
            return Trainer(config, env, on_checkpoint).fit(stop_event)
    finally:
        cleanup_distributed()


class Trainer:
    def __init__(self, config: TrainConfig, env: DistEnv, on_checkpoint: Sequence[CheckpointCallback] = ()) -> None:
        self.config, self.env = config, env
        self.checkpointer = Checkpointer(config.output_url, config.checkpoint.async_checkpoints, env, on_checkpoint)
        self.tokenizer_proto = storage.read_bytes(config.data.tokenizer_url)
        tokenizer, self.tokenizer_sha256 = tokenizer_from_proto(self.tokenizer_proto)
        random.seed(config.seed)
        np.random.seed(config.seed)
        torch.manual_seed(config.seed)
        self.resumed_from = latest_checkpoint(config.output_url)
        start_from = config.checkpoint.init_from if config.checkpoint.init_from and not self.resumed_from else None
        if start_from is not None:
            start_from = resolve_checkpoint(start_from)
            self.config = config = extending(config, read_meta(start_from))
        self.model = config.model.build(tokenizer.get_piece_size(), config.data.seq_len).to(env.device)
        if start_from is not None:
            self._start_from(start_from)
        self.model.activation_checkpointing = config.compute.activation_checkpointing
        self.parallel = parallelize(self.model, config, env, masking_of(self.model.args, config.model.mask_rate))
        self.wrapped = self.parallel.module
        self.optimizer, self.scheduler = config.optimizer.build(
            self.wrapped, config.peak_lr(), config.max_steps, config.model.width_mult
        )
        if config.optimizer.lr_reference_batch_tokens is not None and env.is_main:
            log.info(
                "peak lr %.4g: lr %.4g scaled by %d / %d tokens per step (linear scaling rule)",
                config.peak_lr(),
                config.optimizer.lr,
                config.tokens_per_step,
                config.optimizer.lr_reference_batch_tokens,
            )
        self.state: dict[str, Any] = {"step": 0, "data": {}, "tokens_seen": 0, "initial_validation_loss": None}
        if self.resumed_from:
            if read_meta(self.resumed_from)["tokenizer_sha256"] != self.tokenizer_sha256:
                raise ValueError(
                    f"{self.resumed_from} was trained with another tokenizer than {config.data.tokenizer_url}"
                )
            self.state = load_checkpoint(self.resumed_from, self.wrapped, self.optimizer, self.scheduler)
            log.info("resuming from %s at step %d", self.resumed_from, self.state["step"])
        self.train = load_sequences(config.data.tokens_url, "train", config.data.seq_len)
        self.validation = load_sequences(config.data.tokens_url, "validation", config.data.seq_len)
        self.train_data_sha256 = self.train.sha256()
        self.corpus = corpus_provenance(config.data.tokens_url)
        if self.resumed_from:
            check_resumable(self.resumed_from, config, self.train_data_sha256)
        self._restore_position()
        self.scaler = grad_scaler(config.compute.precision, env.device, config.compute.loss_scale_init)
        if self.scaler is not None and self.state.get("grad_scaler"):
            self.scaler.load_state_dict(self.state["grad_scaler"])
        self.update = Update(self.optimizer, self.scheduler, config.optimizer.grad_clip, self.scaler)
        self.overflow_steps = int(self.state.get("overflow_steps", 0))
        self.nonfinite_steps, self.nonfinite_streak = int(self.state.get("nonfinite_steps", 0)), 0
        self.rollbacks = int(self.state.get("rollbacks", 0))
        self.environment = environment()
        if env.is_main:
            for pitfall in pitfalls(self.model.args, config.compute.precision, env.device):
                log.warning("%s", pitfall)
        self.tokens_per_step = (
            config.data.seq_len * config.data.micro_batch_size * config.data.grad_accum_steps * env.dp_size
        )
        self.observer = RunObserver(
            config.monitor, self.model, env, config.output_url, config.max_steps, config.compute.precision,
            self.step if self.resumed_from else None,
        )  # fmt: skip
        self.metrics = self.observer.metrics

    def _start_from(self, url: str) -> None:
        """Load a checkpoint's weights into the fresh model (its rotary tables are this config's)."""
        meta = read_meta(url)
        if meta["tokenizer_sha256"] != self.tokenizer_sha256:
            raise ValueError(
                f"init_from {url} was trained with another tokenizer than {self.config.data.tokenizer_url}"
            )
        weights, _ = load_model(url)
        try:
            self.model.load_state_dict(weights.state_dict())
        except RuntimeError as error:
            raise ValueError(f"init_from {url} does not fit this model: {str(error).splitlines()[0]}") from None
        log.info("weights from %s (step %d), context %d tokens", url, meta["step"], self.config.data.seq_len)

    def fit(self, stop: threading.Event) -> TrainResult:
        config = self.config
        result = TrainResult(status="completed", step=self.step)
        saved_step = self.step if self.resumed_from else -1
        last_save = time.monotonic()
        train_seconds, val_loss = 0.0, None
        try:
            if self.step == 0:
                self.state["initial_validation_loss"] = val_loss = self.validate()
            while self.step < config.max_steps:
                self.checkpointer.poll()
                started = time.perf_counter()
                timer = PhaseTimer(self.env.device) if self._timed(self.step + 1) else None
                stepped = train_step(self.parallel, self.update, self.batches, config.data.grad_accum_steps, timer)
                loss, grad_norm = stepped.loss, stepped.grad_norm
                if self._skipped(stepped):
                    continue  # rolled back to the last checkpoint: the loop resumes from its step
                # rank 0's clock decides a time-based save; the all-reduce makes every rank agree (a save is collective)
                due = self.env.is_main and self._checkpoint_due(last_save)
                loss_sum, stop_votes, due_votes = all_reduce_sum([loss, float(stop.is_set()), float(due)], self.env)
                train_seconds += time.perf_counter() - started
                self.step += 1
                self.tokens_seen += self.tokens_per_step
                # the ranks of a tensor-parallel group agree; under a pipeline only the last stage's have a loss
                result.losses[self.step] = loss_sum / self.env.loss_ranks
                self.observer.step_done(self.step, result.losses[self.step], timer)
                last = self.step == config.max_steps
                if self.step % config.monitor.log_every == 0 or last:
                    tokens_per_s = self.tokens_per_step * len(result.losses) / train_seconds
                    lr = float(self.scheduler.get_last_lr()[0])
                    self.observer.log_train(self.step, result.losses[self.step], grad_norm, tokens_per_s, lr)
                if self.step % config.monitor.eval_every == 0 or last:
                    val_loss = self.validate()
                if config.monitor.grad_check_every and self.step % config.monitor.grad_check_every == 0:
                    self.check_gradients()
                periodic = self.step % config.checkpoint.checkpoint_every == 0 or due_votes
                every = config.checkpoint.ephemeral_checkpoint_every
                if last or (periodic and not self._evaluation_behind()):
                    saved_step = self.checkpoint()
                    last_save = time.monotonic()
                elif periodic:  # skipped for the backlog: the next time-based save is an interval away, not next step
                    last_save = time.monotonic()
                elif every and self.step % every == 0:
                    self.checkpoint(ephemeral=True)  # a stop here still saves a permanent one, announced
                if stop_votes and not last:
                    result.status = "stopped"
                    break
            if saved_step != self.step:
                self.checkpoint()
            self.checkpointer.close()
            if val_loss is None:
                val_loss = self.validate()
        finally:
            self.metrics.close()
        result.step = self.step
        result.summary = self.summary(result, val_loss, train_seconds)
        if self.env.is_main:
            storage.write_json(storage.join(config.output_url, "train_summary.json"), result.summary)
        log.info("rank %d/%d finished: %s at step %d", self.env.rank, self.env.world_size, result.status, self.step)
        return result

    def _restore_position(self) -> None:
        """Step, tokens seen and data order from ``self.state`` (fresh, resumed or rolled back)."""
        config, env = self.config, self.env
        self.batches = config.data.build_batches(
            self.train, env.dp_rank, env.dp_size, config.seed, config.max_steps, self.state["data"]
        )
        self.step, self.tokens_seen = int(self.state["step"]), int(self.state["tokens_seen"])

    def _skipped(self, stepped: StepResult) -> bool:
        """Count and log a step that applied no update; True when it was the last straw and the run rolled back.
        Every rank sees the same all-reduced gradients, so every rank decides alike."""
        if not stepped.skipped:
            self.nonfinite_streak = 0
            return False
        if self.scaler is not None:  # fp16: an overflow is the loss scaler doing its job
            self.overflow_steps += 1
            if self.env.is_main:
                log.warning(
                    "step %d: fp16 gradients overflowed, update skipped; loss scale now %g (%d skipped so far)",
                    self.step + 1, self.scaler.get_scale(), self.overflow_steps,
                )  # fmt: skip
            return False
        self.nonfinite_steps += 1
        self.nonfinite_streak += 1
        if self.env.is_main:
            log.warning(
                "step %d: non-finite gradient (norm %s), update skipped (%d in a row, %d in all)",
                self.step + 1, stepped.grad_norm, self.nonfinite_streak, self.nonfinite_steps,
            )  # fmt: skip
        if self.nonfinite_streak < self.config.optimizer.max_nonfinite_steps:
            return False
        self.roll_back()
        return True

    def roll_back(self) -> None:
        """Reload the newest checkpoint (weights, optimizer, schedule, data position, RNG) and lower the lr."""
        self.checkpointer.wait()
        if dist.is_initialized():
            dist.barrier()  # rank 0 wrote the manifest: every rank now rolls back to the same checkpoint
        url = latest_checkpoint(self.config.output_url)
        if url is None:
            raise FloatingPointError(
                f"{self.nonfinite_streak} non-finite steps in a row at step {self.step + 1} and no checkpoint to roll "
                "back to: lower lr, raise warmup_steps or set grad_clip"
            )
        self.state = load_checkpoint(url, self.wrapped, self.optimizer, self.scheduler)
        self._restore_position()
        factor = self.config.optimizer.rollback_lr_factor
        self.scheduler.base_lrs = [lr * factor for lr in self.scheduler.base_lrs]  # saved with the schedule
        for group, lr in zip(self.optimizer.param_groups, self.scheduler.base_lrs, strict=True):
            group["lr"] = lr * self.scheduler.lr_lambdas[0](self.scheduler.last_epoch)
        self.rollbacks += 1
        self.nonfinite_streak = 0
        if self.env.is_main:
            log.warning(
                "rolled back to %s (step %d) after %d non-finite steps; lr now x%g of the schedule (rollback %d)",
                url, self.step, self.config.optimizer.max_nonfinite_steps, factor ** self.rollbacks, self.rollbacks,
            )  # fmt: skip

    def check_gradients(self) -> None:
        """Rank 0 compares autograd with finite differences on a float64 copy. Sharded weights (FSDP, tensor
        parallelism) are first gathered whole onto rank 0, a collective every rank joins: the check covers the
        model's ops; that sharded training computes what one process does is held by the distributed tests."""
        skipped_because = None
        if self.parallel.pipeline is not None:
            skipped_because = "under pipeline parallelism no rank holds the whole model"
        elif self.config.model.moe_experts:
            skipped_because = "a router's top-k choice is not differentiable (finite differences flip it)"
        if skipped_because is not None:
            if self.env.is_main and self.step == self.config.monitor.grad_check_every:
                log.info("gradient checks skipped: %s", skipped_because)
            return
        sharded = self.config.parallelism.strategy == "fsdp" or self.env.mesh is not None
        model = unsharded_copy(self.wrapped, self.model.args) if sharded else self.model
        if not self.env.is_main or model is None:
            return
        check = gradient_check(model, seed=self.step)
        self.metrics.scalars(self.step, {"train/grad_check_relative_error": check.max_relative_error})
        if check.passed(self.config.monitor.grad_check_tolerance):
            log.info("gradient check at step %d: max relative error %.2g", self.step, check.max_relative_error)
        else:
            log.warning(
                "gradient check at step %d FAILED: autograd and finite differences differ by %.2g (tolerance %g)",
                self.step, check.max_relative_error, self.config.monitor.grad_check_tolerance,
            )  # fmt: skip

    def _evaluation_behind(self) -> bool:
        """Collective: whether `max_unevaluated_checkpoints` checkpoints await evaluation, so this periodic save is
        skipped; rank 0 looks, every rank follows (a save is collective)."""
        if not self.config.checkpoint.prune_waits_for_evaluation:
            return False
        waiting = len(unevaluated_checkpoints(self.config.output_url)) if self.env.is_main else 0
        behind = all_reduce_sum([float(waiting >= self.config.checkpoint.max_unevaluated_checkpoints)], self.env)[0] > 0
        if behind and self.env.is_main:
            log.warning(
                "step %d: checkpoint skipped: %d checkpoints await evaluation "
                "(train.checkpoint.max_unevaluated_checkpoints)",
                self.step, waiting,
            )  # fmt: skip
        return behind

    def _checkpoint_due(self, last_save: float) -> bool:
        minutes = self.config.checkpoint.checkpoint_every_minutes
        return minutes is not None and time.monotonic() - last_save >= minutes * 60

    def _timed(self, step: int) -> bool:
        """Whether ``step`` is split into timed phases: every step on a CPU; on a GPU, where each phase boundary
        synchronizes the device (and stops the host running ahead), only the logged steps."""
        return self.env.device.type != "cuda" or step % self.config.monitor.log_every == 0

    def validate(self) -> float | None:
        config = self.config
        loss = validation_loss(
            self.parallel, self.validation.ids, config.data.micro_batch_size, config.monitor.eval_batches
        )
        if loss is not None:
            self.observer.validated(self.step, loss)
        batches = max(1, config.monitor.eval_batches // 2)
        splits = {"train": self.train, "validation": self.validation}
        self.metrics.scalars(self.step, losses_by_domain(self.parallel, splits, config.data.micro_batch_size, batches))
        return loss

    def checkpoint(self, ephemeral: bool = False) -> int:
        """Save (collective; the callbacks run once it is complete), upload TensorBoard logs; returns the step."""
        meta = {
            "data": self.batches.state_dict(),  # where the data stream stands, and the bill of what it fed
            "corpus": self.corpus,
            "tokens_seen": self.tokens_seen,
            "train_data_sha256": self.train_data_sha256,
            "grad_scaler": self.scaler.state_dict() if self.scaler is not None else None,
            "overflow_steps": self.overflow_steps,
            "nonfinite_steps": self.nonfinite_steps,
            "rollbacks": self.rollbacks,
            "initial_validation_loss": self.state["initial_validation_loss"],
            "config": self.config.model_dump(mode="json"),
            "model_args": self.model.args.to_dict(),
            "tokenizer_url": self.config.data.tokenizer_url,
            "tokenizer_sha256": self.tokenizer_sha256,
            "code_version": code_version(),
            "environment": self.environment,
            "validation_loss": self.observer.last_validation_loss,  # the newest: what keep_best_checkpoint ranks
        }
        self.checkpointer.save(
            self.step, self.wrapped, self.optimizer, self.scheduler, meta, self.tokenizer_proto, ephemeral
        )  # fmt: skip
        self.metrics.scalars(self.step, {"checkpoint/blocked_seconds": self.checkpointer.last_blocked_s})
        self.metrics.sync()
        return self.step

    def summary(self, result: TrainResult, val_loss: float | None, train_seconds: float) -> dict[str, Any]:
        """The run at a glance, written as `train_summary.json`; throughput counts this process's steps only."""
        initial = self.state["initial_validation_loss"]
        return {
            "status": result.status,
            "steps": self.step,
            "max_steps": self.config.max_steps,
            "tokens_seen": self.tokens_seen,
            "tokens_per_second": self.tokens_per_step * len(result.losses) / train_seconds if train_seconds else None,
            "overflow_steps": self.overflow_steps,
            "nonfinite_steps": self.nonfinite_steps,
            "rollbacks": self.rollbacks,
            "train_seconds": round(train_seconds, 3),
            "final_train_loss": result.losses.get(self.step),
            "initial_validation_loss": initial,
            "initial_validation_perplexity": math.exp(initial) if initial is not None else None,
            "final_validation_loss": val_loss,
            "final_validation_perplexity": math.exp(val_loss) if val_loss is not None else None,
            "num_params": self.model.num_params(),
            "world_size": self.env.world_size,
            "checkpoint_url": latest_checkpoint(self.config.output_url),
        }
