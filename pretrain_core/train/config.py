"""Training and evaluation configs: every knob of a run, validated before any process starts."""

from __future__ import annotations

import logging
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, model_validator

from pretrain_core.config_base import Seed, StrictModel
from pretrain_core.limits import MAX_BATCHES, MAX_STEPS, MAX_VOCAB
from pretrain_core.train.flat_keys import FLAT_KEYS, into_sections, new_key
from pretrain_core.train.model.args import ModelArgs
from pretrain_core.train.parallel.compression import NEEDS_NCCL
from pretrain_core.train.parallel.layout import Layout, pipeline_problems
from pretrain_core.train.sections.checkpoint import CheckpointConfig
from pretrain_core.train.sections.compute import ComputeConfig
from pretrain_core.train.sections.data import DataConfig
from pretrain_core.train.sections.launch import LaunchConfig
from pretrain_core.train.sections.model import ModelConfig
from pretrain_core.train.sections.monitor import MonitorConfig
from pretrain_core.train.sections.optimizer import OptimizerConfig
from pretrain_core.train.sections.parallelism import ParallelismConfig

log = logging.getLogger(__name__)


class TrainConfig(StrictModel):
    """One training run: a section per component, plus the run's length, seed and place. Defaults are the CPU demo:
    the `tiny` model (1.8M parameters with an 8k vocabulary) for 200 steps of 16 x 128 tokens, about 90 s at ~5k
    tokens/s on 2 free cores (the README shows what the demo's validation perplexity does).

    Settings given under their old flat names (`lr`, `tensor_parallel`) are moved into their sections with a
    one-line deprecation (`flat_keys.py`); `pretrain config migrate FILE` rewrites a file."""

    # The old flat keys it still reads, each with the key it is now (for the flags of `python -m pretrain_core.train`)
    renamed: ClassVar[dict[str, str]] = {flat: new_key(flat) for flat in (*FLAT_KEYS, "model")}

    model: ModelConfig = Field(default_factory=ModelConfig, description="The network.")
    optimizer: OptimizerConfig = Field(default_factory=OptimizerConfig, description="AdamW and its lr schedule.")
    compute: ComputeConfig = Field(default_factory=ComputeConfig, description="Precision, compile, recomputation.")
    parallelism: ParallelismConfig = Field(
        default_factory=ParallelismConfig, description="Tensor, context, pipeline, expert and data parallelism."
    )
    checkpoint: CheckpointConfig = Field(default_factory=CheckpointConfig, description="Saving, keeping, resuming.")
    monitor: MonitorConfig = Field(default_factory=MonitorConfig, description="Validation, logs and alarms.")
    data: DataConfig = Field(default_factory=DataConfig, description="Token shards, tokenizer, batch.")
    launch: LaunchConfig = Field(default_factory=LaunchConfig, description="torchrun and threads.")
    max_steps: int = Field(
        le=MAX_STEPS, default=200, ge=1, description="Optimizer steps of the whole run (the schedule's length)."
    )
    seed: Seed = Field(default=1234, description="Seed for initialisation and data order.")
    output_url: str = Field(
        default="runs/demo/train", description="Where checkpoints, TensorBoard logs and summary go."
    )

    @model_validator(mode="before")
    @classmethod
    def _sections_from_flat_keys(cls, data: Any) -> Any:
        return into_sections(data) if isinstance(data, dict) else data

    @model_validator(mode="after")
    def _check_how_sections_meet(self) -> TrainConfig:
        parallel = self.parallelism
        self._check_expert_parallel()
        self._check_layout()
        if parallel.gradient_compression != "none" and (parallel.strategy != "ddp" or parallel.model_parallel):
            raise ValueError(
                "gradient_compression is a DDP option: FSDP, tensor and pipeline parallelism reduce their own way"
            )
        if parallel.gradient_compression in NEEDS_NCCL and self.launch.backend == "gloo":
            raise ValueError(f"gradient_compression {parallel.gradient_compression} needs the nccl backend (GPUs)")
        if self.compute.precision == "fp16" and parallel.strategy == "fsdp":
            raise ValueError("precision fp16 with strategy fsdp needs a sharded gradient scaler: use bf16, or ddp")
        if self.launch.nnodes > 1 and not self.launch.rdzv_endpoint:
            raise ValueError("nnodes > 1 needs rdzv_endpoint (host:port of the rendezvous)")
        if self.optimizer.warmup_steps >= self.max_steps:
            log.warning(
                "train.optimizer.warmup_steps %d >= train.max_steps %d: the learning rate never reaches the peak "
                "and never decays; warmup is usually 1-10%% of the run", self.optimizer.warmup_steps, self.max_steps,
            )  # fmt: skip
        return self

    def _check_expert_parallel(self) -> None:
        """Expert parallelism needs experts to spread, ranks to spread them over and DDP; one line names each lack."""
        parallel, experts = self.parallelism, self.model.moe_experts
        if parallel.expert_parallel == 1:
            return
        ranks = self.launch.ranks
        problems = [
            problem for problem, broken in (
                ("needs moe_experts", not experts),
                (f"must divide moe_experts {experts}", experts % parallel.expert_parallel),
                (f"must divide the {ranks} ranks", ranks % parallel.expert_parallel),
                ("needs strategy ddp (FSDP would shard the experts again)", parallel.strategy != "ddp"),
                ("does not support precision fp16 (ranks would skip different steps)",
                 self.compute.precision == "fp16"),
                ("does not support gradient_compression", parallel.gradient_compression != "none"),
                ("does not combine with tensor or pipeline parallelism yet", parallel.model_parallel),
            ) if broken
        ]  # fmt: skip
        if problems:
            raise ValueError(f"expert_parallel {parallel.expert_parallel} " + "; ".join(problems))

    def _check_layout(self) -> None:
        """The parallel layout must fit the ranks and the model; one line names every problem."""
        parallel = self.parallelism
        problems = self.layout.problems(self.data.seq_len)
        problems += pipeline_problems(
            self.model.shape()[0], parallel.pipeline_parallel, parallel.pipeline_schedule,
            parallel.pipeline_virtual_stages, parallel.microbatches, self.data.micro_batch_size,
            parallel.pipeline_layers_per_stage,
        )  # fmt: skip
        if problems:
            raise ValueError("; ".join(problems))
        if self.layout.dp > 1 and parallel.model_parallel and parallel.strategy != "fsdp":
            raise ValueError("tensor or pipeline parallelism with data parallelism needs strategy fsdp (a mesh)")
        kinds = (("tensor", parallel.tensor_parallel), ("pipeline", parallel.pipeline_parallel),
                 ("context", parallel.context_parallel))  # fmt: skip
        for name, degree in kinds:
            unsupported = [
                what for what, on in (("objective masked", self.model.objective == "masked"),
                                      ("precision fp16", self.compute.precision == "fp16" and name != "context"),
                                      ("dropout", self.model.dropout > 0 and name == "context")) if on
            ]  # fmt: skip
            if degree > 1 and unsupported:
                raise ValueError(f"{name} parallelism does not support {', '.join(unsupported)} yet")

    def updated(self, **settings: Any) -> TrainConfig:
        """This config with ``settings`` (flat names, as the sweeps and ablations vary them, or whole sections)
        changed, validated again."""
        return TrainConfig.model_validate(into_sections({**self.model_dump(), **settings}, warn=False))

    def setting(self, name: str) -> Any:
        """A setting's value by its flat name (`lr`, `tensor_parallel`), wherever its section holds it."""
        section, field = FLAT_KEYS[name]
        return getattr(getattr(self, section), field)

    @property
    def layout(self) -> Layout:
        parallel = self.parallelism
        return Layout(
            self.launch.ranks, pp=parallel.pipeline_parallel, cp=parallel.context_parallel, tp=parallel.tensor_parallel
        )

    def model_args(self, vocab_size: int) -> ModelArgs:
        """The network for a tokenizer of ``vocab_size`` pieces at this run's sequence length."""
        return self.model.args(vocab_size, self.data.seq_len)

    def peak_lr(self) -> float:
        """The lr warmup reaches, after the linear scaling rule when the optimizer section asks for it."""
        return self.optimizer.peak_lr(self.tokens_per_step)

    @property
    def data_parallel_size(self) -> int:
        """Replicas that read different batches: the ranks of a tensor-parallel group or a pipeline share one."""
        return self.layout.dp

    @property
    def tokens_per_step(self) -> int:
        """Tokens consumed by one optimizer step across all ranks."""
        data = self.data
        return data.seq_len * data.micro_batch_size * data.grad_accum_steps * self.data_parallel_size


DEFAULT_PROMPTS = (
    "The licensee may",
    "Copyright (C)",
    "人工智能是",
    "def main():\n    ",
)


class EvalConfig(StrictModel):
    """Held-out evaluation of one checkpoint: per-domain loss on validation/test and a few generated samples."""

    batches_per_split: int = Field(
        le=MAX_BATCHES, default=32, ge=1, description="Batches scored per split (validation, test) at most."
    )
    batch_size: int = Field(default=8, ge=1, le=4096, description="Sequences per scoring batch.")
    prompts: tuple[str, ...] = Field(
        default=DEFAULT_PROMPTS, description="Prompts to sample from (greedy and top-k each; the probes cycle them)."
    )
    max_new_tokens: int = Field(default=48, ge=1, le=4096, description="Tokens generated per sample.")
    top_k: int = Field(default=40, ge=1, le=MAX_VOCAB, description="Top-k cutoff for the sampled completions.")
    temperature: float = Field(default=0.8, gt=0, le=10, description="Softmax temperature for the sampled completions.")
    seed: Seed = Field(
        default=1234, description="Seed of the sampled completions, the scored rows and the zero-shot items."
    )
    num_threads: int = Field(default=2, ge=1, le=512, description="torch intra-op threads.")
    precision: Literal["fp32", "bf16"] = Field(default="fp32", description="fp32, or bf16 autocast for scoring.")
    zero_shot_items: int = Field(
        default=40,
        ge=0,
        le=10_000,
        description="Zero-shot items per task (last word, continuation) and language group (en, zh, other), "
        "built from the test split; 0 turns the tasks off.",
    )
    probe_samples: int = Field(
        default=8,
        ge=0,
        le=1000,
        description="Sampled completions screened by the toxicity probe and measured for variety and repetition "
        "(with the bias probe's sentence pairs); 0 turns the probes off.",
    )
    long_context_lengths: list[Annotated[int, Field(ge=16, le=65536)]] = Field(
        default_factory=list,
        max_length=16,
        description="Context lengths to also score held-out loss by position and passkey "
        "retrieval at, with the checkpoint's own RoPE scaling (as `pretrain evaluate --long-context`; the figures "
        "and heat map beside the checkpoint). Empty: off.",
    )
