"""The knobs ops set when launching a training run by hand (a typed form in the Prefect UI), mapped onto the full
`TrainConfig`. Fewer fields than `TrainConfig` on purpose: what changes between runs, with bounds the form enforces.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import Field

from pretrain_core import storage
from pretrain_core.config_base import StrictModel
from pretrain_core.train.config import TrainConfig

ModelPreset = Literal["tiny", "small", "124m"]  # the keys of MODEL_PRESETS


def default_run_name(model: str, max_steps: int, now: datetime | None = None) -> str:
    """`train-<preset>-step<max_steps>-<UTC date>`: says what ran, and is stable through the day so a relaunch
    (or a retried flow run) finds and resumes the same output directory."""
    day = (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y%m%d")
    return f"train-{model}-step{max_steps}-{day}"


def _run_name_from(data: dict[str, Any]) -> str:
    return default_run_name(data.get("model", "tiny"), data.get("max_steps", 0))


class TrainRunParams(StrictModel):
    """One training run as launched from the UI or a deployment; `to_train_config` resolves it."""

    model: ModelPreset = Field(default="tiny", description="Model size preset: tiny (1.8M), small, 124m (GPT-2).")
    max_steps: int = Field(default=200, ge=1, le=10_000_000, description="Optimizer steps of the whole run.")
    run_name: str = Field(
        default_factory=_run_name_from,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$",
        description="Names the output directory and the events' resource (pretrain.run.RUN_NAME). Unset: "
        "train-MODEL-stepMAX_STEPS-YYYYMMDD (UTC). Reusing a name resumes that run from its newest checkpoint.",
    )
    seq_len: int = Field(default=256, ge=8, le=8192, description="Tokens per sequence; must match the token shards.")
    micro_batch_size: int = Field(default=16, ge=1, le=4096, description="Sequences per rank per forward pass.")
    grad_accum_steps: int = Field(default=1, ge=1, le=1024, description="Micro-batches accumulated per step.")
    lr: float = Field(default=3e-3, gt=0, le=1.0, description="Peak learning rate, reached at the end of warmup.")
    warmup_steps: int = Field(default=20, ge=0, description="Steps of linear warmup from 0 to the peak rate.")
    precision: Literal["fp32", "bf16"] = Field(default="fp32", description="fp32, or bf16 autocast (fp32 weights).")
    num_threads: int = Field(default=2, ge=1, le=512, description="torch intra-op threads per worker process.")
    nproc_per_node: int = Field(default=1, ge=1, le=64, description="Worker processes per node (GPUs per node).")
    nnodes: int = Field(default=1, ge=1, le=4096, description="Nodes in the job; more than 1 needs rdzv_endpoint.")
    rdzv_endpoint: str | None = Field(
        default=None, description="host:port of the c10d rendezvous; empty runs torchrun --standalone on one node."
    )
    tokens_url: str = Field(
        default="outputs/demo/corpus/tokenize", description="Token shards: the tokenize stage's output root."
    )
    tokenizer_url: str = Field(
        default="outputs/demo/corpus/tokenizer/tokenizer.model", description="SentencePiece model the shards use."
    )
    output_root: str = Field(
        default="outputs/train", description="The run writes checkpoints and logs under OUTPUT_ROOT/RUN_NAME."
    )
    checkpoint_every: int = Field(default=100, ge=1, description="Checkpoint every this many steps (and at the end).")
    timeout_s: float | None = Field(
        default=None, gt=0, description="Terminate training after this many seconds; empty: no limit."
    )

    @property
    def output_url(self) -> str:
        return storage.join(self.output_root, self.run_name)

    def to_train_config(self) -> TrainConfig:
        """The full, validated training config; knobs not on the form keep TrainConfig's defaults."""
        return TrainConfig(
            model=self.model,
            max_steps=self.max_steps,
            seq_len=self.seq_len,
            micro_batch_size=self.micro_batch_size,
            grad_accum_steps=self.grad_accum_steps,
            lr=self.lr,
            warmup_steps=self.warmup_steps,
            precision=self.precision,
            num_threads=self.num_threads,
            nproc_per_node=self.nproc_per_node,
            nnodes=self.nnodes,
            rdzv_endpoint=self.rdzv_endpoint,
            tokens_url=self.tokens_url,
            tokenizer_url=self.tokenizer_url,
            output_url=self.output_url,
            checkpoint_every=self.checkpoint_every,
        )
