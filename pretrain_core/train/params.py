"""The knobs ops set when launching a training run by hand (a typed form in the Prefect UI), mapped onto the full
`TrainConfig`. Fewer fields than `TrainConfig` on purpose: what changes between runs, with bounds the form enforces.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import Field

from pretrain_core import storage
from pretrain_core.config_base import StrictModel
from pretrain_core.limits import MAX_SECONDS
from pretrain_core.train.config import TrainConfig
from pretrain_core.train.flat_keys import FLAT_KEYS, SECTIONS, into_sections
from pretrain_core.train.model.args import Objective, Parametrization, PositionEncoding, RopeScaling
from pretrain_core.train.parallel.layout import PipelineSchedule
from pretrain_core.train.precision import Precision
from pretrain_core.train.sections.model import ModelConfig, ModelPreset


def default_run_name(model: str, max_steps: int, now: datetime | None = None) -> str:
    """`train-<preset>-step<max_steps>-<UTC date>`: says what ran, and is stable through the day so a relaunch
    (or a retried flow run) finds and resumes the same output directory."""
    day = (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y%m%d")
    return f"train-{model}-step{max_steps}-{day}"


def _run_name_from(data: dict[str, Any]) -> str:
    return default_run_name(data.get("model", "tiny"), data.get("max_steps", 0))


_BOUND_WORDS = {"ge": "≥", "gt": ">", "le": "≤", "lt": "<"}


def _knob(name: str) -> Any:
    """The config section's own field (default, bounds, description): the form cannot drift from the config it
    fills.
    The bounds are also spelt out in the description, which the UI shows beside the input (it enforces them
    silently otherwise)."""
    section, field_name = FLAT_KEYS.get(name, ("", name))
    holder = SECTIONS[section] if section else TrainConfig
    field = copy.deepcopy(holder.model_fields[field_name])
    bounds = [
        f"{_BOUND_WORDS[attr]} {getattr(meta, attr):g}"
        for meta in field.metadata
        for attr in _BOUND_WORDS
        if getattr(meta, attr, None) is not None
    ]
    if bounds:
        field.description = f"{field.description} Allowed: {', '.join(bounds)}."
    return field


# What changes between runs; everything else keeps TrainConfig's defaults.
FORM_KNOBS = (
    "max_steps", "seq_len", "micro_batch_size", "grad_accum_steps", "lr", "warmup_steps", "precision",
    "num_threads", "nproc_per_node", "nnodes", "rdzv_endpoint", "tokens_url", "tokenizer_url", "checkpoint_every",
    "keep_last_checkpoints", "keep_best_checkpoint", "checkpoint_every_minutes", "lr_schedule", "position_encoding",
    "dropout", "activation_checkpointing", "compile", "objective", "tensor_parallel", "pipeline_parallel",
    "pipeline_schedule", "pipeline_microbatches", "context_parallel", "strategy", "gpu_memory_gib", "parametrization",
    "rope_scaling", "rope_scaling_factor", "init_from",
)  # fmt: skip


class TrainRunParams(StrictModel):
    """One training run as launched from the UI or a deployment; `to_train_config` resolves it. Its knobs are
    TrainConfig's fields; only the preset (no custom shapes on the form), the run's name, where runs go and a
    time limit are the form's own."""

    model: ModelPreset = Field(
        default=ModelConfig.model_fields["preset"].default,
        description="Model size preset: tiny (1.8M), small (23M), 124m, 350m, 760m, 2b-deep (the articles' sizes).",
    )
    max_steps: int = _knob("max_steps")
    run_name: str = Field(
        default_factory=_run_name_from,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$",
        description="Names the output directory and the events' resource (pretrain.run.RUN_NAME). Unset: "
        "train-MODEL-stepMAX_STEPS-YYYYMMDD (UTC). Reusing a name resumes that run from its newest checkpoint.",
    )
    seq_len: int = _knob("seq_len")
    micro_batch_size: int = _knob("micro_batch_size")
    grad_accum_steps: int = _knob("grad_accum_steps")
    lr: float = _knob("lr")
    warmup_steps: int = _knob("warmup_steps")
    precision: Precision = _knob("precision")
    num_threads: int = _knob("num_threads")
    nproc_per_node: int = _knob("nproc_per_node")
    nnodes: int = _knob("nnodes")
    rdzv_endpoint: str | None = _knob("rdzv_endpoint")
    tokens_url: str = _knob("tokens_url")
    tokenizer_url: str = _knob("tokenizer_url")
    output_root: str = Field(
        default="outputs/train", description="The run writes checkpoints and logs under OUTPUT_ROOT/RUN_NAME."
    )
    checkpoint_every: int = _knob("checkpoint_every")
    keep_last_checkpoints: int = _knob("keep_last_checkpoints")
    keep_best_checkpoint: bool = _knob("keep_best_checkpoint")
    checkpoint_every_minutes: float | None = _knob("checkpoint_every_minutes")
    lr_schedule: Literal["cosine", "linear", "constant"] = _knob("lr_schedule")
    position_encoding: PositionEncoding = _knob("position_encoding")
    dropout: float = _knob("dropout")
    activation_checkpointing: bool = _knob("activation_checkpointing")
    compile: bool = _knob("compile")
    objective: Objective = _knob("objective")
    tensor_parallel: int = _knob("tensor_parallel")
    pipeline_parallel: int = _knob("pipeline_parallel")
    pipeline_schedule: PipelineSchedule = _knob("pipeline_schedule")
    pipeline_microbatches: int | None = _knob("pipeline_microbatches")
    context_parallel: int = _knob("context_parallel")
    strategy: Literal["ddp", "fsdp"] = _knob("strategy")
    gpu_memory_gib: float | None = _knob("gpu_memory_gib")
    parametrization: Parametrization = _knob("parametrization")
    rope_scaling: RopeScaling = _knob("rope_scaling")
    rope_scaling_factor: float = _knob("rope_scaling_factor")
    init_from: str | None = _knob("init_from")
    timeout_s: float | None = Field(
        default=None,
        gt=0,
        le=MAX_SECONDS,
        description="Terminate training after this many seconds; empty: no limit. Allowed: > 0.",
    )

    @property
    def output_url(self) -> str:
        return storage.join(self.output_root, self.run_name)

    def to_train_config(self) -> TrainConfig:
        """The full, validated training config; knobs not on the form keep TrainConfig's defaults."""
        knobs = into_sections(self.model_dump(include=set(FORM_KNOBS)), warn=False)
        return TrainConfig.model_validate({**knobs, "model": {**knobs.get("model", {}), "preset": self.model},
                                           "output_url": self.output_url})  # fmt: skip
