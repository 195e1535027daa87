"""What a training run reports as it goes, built from the monitor section: TensorBoard scalars, the progress line,
MFU, memory and device state, loss spikes, stragglers and the overfitting alarm. The trainer tells it what happened
(a step's loss, a validation loss); it decides what to log and warn about."""

from __future__ import annotations

import logging
import math

import torch

from pretrain_core.train.model.gpt import GPT
from pretrain_core.train.model.moe import moe_stats
from pretrain_core.train.numerics import TORCH_DTYPES
from pretrain_core.train.observe.flops import flops_per_token
from pretrain_core.train.observe.hardware import device_metrics, measure_peak_flops, memory_metrics
from pretrain_core.train.observe.health import LossSpikeDetector, StragglerCheck
from pretrain_core.train.observe.metrics import MetricsLogger
from pretrain_core.train.parallel.distributed import DistEnv
from pretrain_core.train.precision import Precision
from pretrain_core.train.sections.monitor import MonitorConfig
from pretrain_core.train.step import PhaseTimer

log = logging.getLogger(__name__)


class RunObserver:
    """One run's measurements on this rank (rank 0 writes and warns). ``resumed_at``: the step a resumed run
    starts from, whose later TensorBoard events replace the killed attempt's."""

    def __init__(
        self,
        config: MonitorConfig,
        model: GPT,
        env: DistEnv,
        output_url: str,
        max_steps: int,
        precision: Precision,
        resumed_at: int | None = None,
    ) -> None:
        self.config, self.model, self.env, self.max_steps, self.precision = config, model, env, max_steps, precision
        self.metrics = MetricsLogger(output_url, env.is_main, resumed_at)
        args = model.args
        output = args.vocab_size * args.d_model  # the output projection's matmul, tied or not (as nanoGPT)
        self.flops_per_token = flops_per_token(
            model.non_embedding_params(), args.n_layer, args.max_seq_len, args.d_model, output
        )
        self.peak_flops = config.peak_flops_per_device
        self.last_train_loss: float | None = None
        self.last_validation_loss: float | None = None
        self.spikes = LossSpikeDetector(config.loss_spike_window, config.loss_spike_sigma)
        self.health: dict[str, float] = {}
        self.stragglers = StragglerCheck(env, config.straggler_check_every, config.straggler_factor)

    def step_done(self, step: int, loss: float, timer: PhaseTimer | None) -> None:
        """Every step: its loss, memory and the device's state, a loss spike; on timed steps where this rank's step
        time went; every `straggler_check_every` steps (a collective) the slowest rank of the timed steps."""
        self.last_train_loss = loss
        self.metrics.scalars(step, {"train/loss": loss})
        values = memory_metrics(self.env.device) | device_metrics(self.env.device) | moe_stats(self.model)
        if timer is not None:
            phases = timer.seconds
            self.stragglers.observe(phases["data"] + phases["forward"])
            values |= {f"time/{phase}_seconds": seconds for phase, seconds in phases.items()}
            values["time/data_share"] = phases["data"] / max(sum(phases.values()), 1e-12)
        self.metrics.scalars(step, values)
        self.health = {  # for the progress line, which the Prefect progress artifact shows
            "memory_mb": values.get("memory/cuda_allocated_mb", values["memory/cpu_rss_mb"]),
        } | {
            name: values[key]
            for name, key in (("data_share", "time/data_share"), ("gpu_util", "gpu/utilization_percent"))
            if key in values
        }
        events = [self.spikes.observe(step, loss)]
        if self.stragglers.due(step):
            report = self.stragglers.check(step)
            self.metrics.scalars(step, report.metrics())
            events.append(report.event)
        for event in events:
            if event is not None and self.env.is_main:
                log.warning("%s", event.line())

    def log_train(self, step: int, loss: float, grad_norm: float, tokens_per_s: float, lr: float) -> None:
        """The periodic training line (and its TensorBoard scalars): loss, lr, gradient norm, throughput, MFU."""
        values = {"loss": loss, "lr": lr, "grad_norm": grad_norm, "tokens_per_s": tokens_per_s}
        values["mfu"] = self.mfu(tokens_per_s)
        self.metrics.scalars(step, {f"train/{name}": value for name, value in values.items() if name != "loss"})
        self.metrics.progress(step, self.max_steps, values | self.health)

    def mfu(self, tokens_per_s: float) -> float:
        """Model FLOPs utilisation: the training FLOPs done per second over the devices' peak (all ranks)."""
        if self.peak_flops is None and self.env.is_main:
            dtype = TORCH_DTYPES[self.precision]
            if dtype == torch.float16 and self.env.device.type == "cpu":
                dtype = torch.float32  # CPUs emulate fp16 matmuls: fp32 is the real ceiling there
            self.peak_flops = measure_peak_flops(self.env.device, dtype)
            log.info("measured peak %.3g FLOP/s per device in %s: the MFU denominator", self.peak_flops, dtype)
        if not self.peak_flops:
            return 0.0
        return tokens_per_s * self.flops_per_token / (self.peak_flops * self.env.world_size)

    def validated(self, step: int, loss: float) -> None:
        """A validation loss: logged, and compared with the recent training loss (the overfitting alarm)."""
        self.last_validation_loss = loss
        self.metrics.scalars(step, {"val/loss": loss, "val/perplexity": math.exp(loss)})
        self.metrics.progress(step, self.max_steps, {"val_loss": loss, "val_ppl": math.exp(loss)})
        if self.last_train_loss is None or not math.isfinite(self.last_train_loss):
            return
        ratio = math.exp(loss - self.last_train_loss)  # validation perplexity / training perplexity
        self.metrics.scalars(step, {"val/train_perplexity_ratio": ratio})
        if ratio > self.config.overfit_alarm_ratio and self.env.is_main:
            log.warning(
                "step %d: validation perplexity is %.2fx the training perplexity (alarm at %.2fx): the "
                "model may be memorising its training data", step, ratio, self.config.overfit_alarm_ratio,
            )  # fmt: skip
