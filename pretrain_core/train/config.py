"""Training and evaluation configs: every knob of a run, validated before any process starts."""

from __future__ import annotations

import logging
from typing import Annotated, Literal

from pydantic import Field, model_validator

from pretrain_core.config_base import Seed, StrictModel
from pretrain_core.limits import (
    MAX_BATCH_TOKENS,
    MAX_BATCHES,
    MAX_CHECKPOINTS,
    MAX_FLOPS,
    MAX_MINUTES,
    MAX_STEPS,
    MAX_VOCAB,
)
from pretrain_core.train.compression import NEEDS_NCCL, GradientCompression
from pretrain_core.train.layout import Layout, PipelineSchedule, pipeline_problems, stages_per_rank
from pretrain_core.train.model_args import (
    BlockKind,
    ModelArgs,
    MoeBalance,
    MoeRouter,
    Objective,
    Parametrization,
    PositionEncoding,
    RopeScaling,
)
from pretrain_core.train.precision import Precision

log = logging.getLogger(__name__)

ModelPreset = Literal["tiny", "small", "124m", "350m", "760m", "2b-deep"]
# (n_layer, n_head, d_model). `tiny` trains the CPU demo in minutes; `124m` is GPT-2 small; the larger ones are the
# source articles' sizes (hidden 768/1024/1536, heads 12/16/32, 12-72 layers): 350m is GPT-2 medium's shape,
# 760m GPT-3 Large's, 2b-deep the articles' 72 layers at 1536 wide. Parameters below count a 32k vocabulary.
MODEL_PRESETS: dict[str, tuple[int, int, int]] = {
    "tiny": (4, 4, 128),  # 1.8M with an 8k vocabulary
    "small": (6, 6, 384),  # 23M
    "124m": (12, 12, 768),  # 110M
    "350m": (24, 16, 1024),  # 335M
    "760m": (24, 16, 1536),  # 730M
    "2b-deep": (72, 32, 1536),  # 2.1B
}


class TrainConfig(StrictModel):
    """One training run. Defaults are the CPU demo: the `tiny` model (1.8M parameters with an 8k vocabulary) for
    200 steps of 16 x 128 tokens, about 90 s at ~5k tokens/s on 2 free cores (the README shows what the demo's
    validation perplexity does)."""

    model: ModelPreset | None = Field(
        default="tiny", description="Model size preset; explicit n_layer/n_head/d_model override its values."
    )
    n_layer: int | None = Field(default=None, ge=1, le=128, description="Transformer blocks (overrides the preset).")
    n_head: int | None = Field(default=None, ge=1, le=128, description="Attention heads (overrides the preset).")
    d_model: int | None = Field(default=None, ge=16, le=16384, description="Residual width (overrides the preset).")
    seq_len: int = Field(default=256, ge=8, le=8192, description="Tokens per training sequence; must match the shards.")
    block: BlockKind = Field(
        default="gpt",
        description="gpt: GELU MLP (GPT-2's); llama: SwiGLU MLP (8/3 x d_model hidden), the block Hugging Face's "
        "LlamaForCausalLM runs, so `pretrain export --format hf` can write it. Both: pre-norm RMSNorm, no biases.",
    )
    n_kv_head: int | None = Field(
        default=None,
        ge=1,
        le=128,
        description="Grouped-query attention: key/value heads, each shared by n_head / n_kv_head query heads (a "
        "smaller KV cache); must divide n_head. Unset: one per query head.",
    )
    moe_experts: int = Field(
        default=0,
        ge=0,
        le=512,
        description="0: a dense MLP. Else a mixture of this many experts per block, each token routed to its top "
        "moe_top_k; each expert is the dense MLP's width / moe_top_k, so a token costs what it costs dense.",
    )
    moe_top_k: int = Field(default=2, ge=1, le=64, description="Experts each token visits.")
    moe_router: MoeRouter = Field(default="softmax", description="softmax (Switch, Mixtral) or sigmoid (DeepSeek-V3).")
    moe_balance: MoeBalance = Field(
        default="loss",
        description="loss: Switch's load-balancing loss (weight 0.01) plus the router z-loss (0.001); bias: "
        "DeepSeek-V3's auxiliary-loss-free expert bias, nudged after each step towards idle experts.",
    )
    moe_capacity_factor: float | None = Field(
        default=None,
        gt=0,
        le=64,
        description="An expert takes at most this x tokens x top_k / experts tokens per forward; the rest are "
        "dropped (residual only) and counted in TensorBoard. Unset: dropless.",
    )
    moe_shared_expert: bool = Field(default=False, description="Add an expert every token passes through.")
    expert_parallel: int = Field(
        default=1,
        ge=1,
        le=512,
        description="Data-parallel ranks each MoE layer's experts are spread over (each holds moe_experts / this "
        "many; tokens travel to their experts by all-to-all). Must divide the ranks and moe_experts; DDP only.",
    )
    parametrization: Parametrization = Field(
        default="standard",
        description="standard, or mup (maximal update parametrization, with m = d_model / mup_base_width): hidden "
        "weights initialised with std / sqrt(m) and stepped with lr / m, logits divided by m, attention scaled by "
        "1/head_dim; a learning rate tuned at the base width then holds at other widths (`pretrain sweep`).",
    )
    mup_base_width: int = Field(
        default=128, ge=8, le=65536, description="µP: the width at which it equals standard parametrization."
    )
    objective: Objective = Field(
        default="causal",
        description="causal: predict the next token (what generation needs). masked: BERT's masked language model, "
        "mask_rate of the tokens hidden (80 % [MASK], 10 % random, 10 % kept), bidirectional attention, loss on "
        "the hidden ones only.",
    )
    mask_rate: float = Field(default=0.15, gt=0, lt=1, description="masked objective: share of positions hidden.")
    position_encoding: PositionEncoding = Field(
        default="rope",
        description="rope (rotary, relative) | alibi (per-head distance penalty, relative) | learned | sinusoidal "
        "(absolute, added to the embeddings). The articles recommend a relative one for long contexts.",
    )
    rope_scaling: RopeScaling = Field(
        default="none",
        description="How RoPE positions past rope_original_seq_len are mapped onto trained angles: linear "
        "(position interpolation), ntk (base change), yarn, llama3; none. A factor of 1 is plain RoPE.",
    )
    rope_scaling_factor: float = Field(default=1.0, ge=1, le=1024, description="Context stretch of rope_scaling.")
    rope_original_seq_len: int | None = Field(
        default=None,
        ge=8,
        le=1_048_576,
        description="The length the model was first trained at, which rope_scaling stretches from (default: "
        "init_from's, else seq_len).",
    )
    init_from: str | None = Field(
        default=None,
        description="Start from this checkpoint's weights (a checkpoint directory or a training output), with a "
        "fresh optimizer and schedule: context extension (a longer seq_len with a rope_scaling) or continued "
        "training. Ignored once the run has a checkpoint of its own (it resumes from that).",
    )
    dropout: float = Field(
        default=0.0,
        ge=0,
        lt=1,
        description="Dropout on embeddings, attention probabilities and residual writes while training; the "
        "articles use 0.1, deduplicated pretraining data usually needs none.",
    )
    compile: bool = Field(
        default=False,
        description="torch.compile the model (tried on a probe batch first; when it fails, training goes on "
        "uncompiled and the log says why). On CPU it gained <= 5 % after a 30-90 s compile.",
    )
    compile_backend: str = Field(
        default="inductor", description="torch.compile backend (inductor, aot_eager, cudagraphs, ...)."
    )
    activation_checkpointing: bool = Field(
        default=False,
        description="Keep only each block's input in forward and recompute the rest in backward: less activation "
        "memory (docs/benchmarks.md has the figures) for about a third more compute.",
    )
    micro_batch_size: int = Field(
        default=16, ge=1, le=4096, description="Sequences per rank per forward/backward pass."
    )
    grad_accum_steps: int = Field(default=1, ge=1, le=1024, description="Micro-batches accumulated per optimizer step.")
    max_steps: int = Field(
        le=MAX_STEPS, default=200, ge=1, description="Optimizer steps of the whole run (the schedule's length)."
    )
    lr: float = Field(default=3e-3, gt=0, le=1.0, description="Peak learning rate, reached at the end of warmup.")
    min_lr_ratio: float = Field(default=0.1, ge=0, le=1, description="Final learning rate as a fraction of `lr`.")
    warmup_steps: int = Field(default=20, ge=0, le=MAX_STEPS, description="Steps of linear warmup from 0 to `lr`.")
    lr_schedule: Literal["cosine", "linear", "constant"] = Field(
        default="cosine", description="After warmup: cosine or linear decay to min_lr_ratio x lr, or a constant lr."
    )
    lr_reference_batch_tokens: int | None = Field(
        default=None,
        ge=1,
        le=MAX_BATCH_TOKENS,
        description="Linear scaling rule: `lr` was tuned at this many tokens per optimizer step, and the peak "
        "becomes lr x (global batch tokens / this), so changing GPUs or micro-batches keeps the tuned lr. "
        "Unset: `lr` as given.",
    )
    weight_decay: float = Field(default=0.01, ge=0, le=1, description="AdamW decoupled weight decay (matrices only).")
    betas: tuple[float, float] = Field(default=(0.9, 0.999), description="AdamW (beta1, beta2).")
    eps: float = Field(default=1e-8, gt=0, le=1e-3, description="AdamW epsilon.")
    grad_clip: float = Field(default=1.0, ge=0, le=1e6, description="Max global gradient L2 norm; 0 disables clipping.")
    precision: Precision = Field(
        default="fp32",
        description="fp32; bf16 autocast with fp32 weights (warned when the device has no native bf16); or fp16 "
        "autocast with dynamic loss scaling (overflowed steps are skipped, counted and logged).",
    )
    loss_scale_init: float = Field(
        default=2.0**16,
        ge=1,
        le=2.0**64,
        description="fp16 only: the first loss scale; halved at each overflow, doubled after 2,000 clean steps.",
    )
    max_nonfinite_steps: int = Field(
        default=3,
        ge=1,
        le=MAX_STEPS,
        description="A step with a nan/inf gradient is skipped (counted, logged); after this many in a row the run "
        "rolls back to its last checkpoint and lowers the lr by rollback_lr_factor.",
    )
    rollback_lr_factor: float = Field(
        default=0.5, gt=0, le=1, description="Multiplies the lr schedule at each rollback after non-finite steps."
    )
    grad_check_every: int = Field(
        default=1000,
        ge=0,
        le=MAX_STEPS,
        description="Every this many steps, check autograd against finite differences on a float64 copy of the "
        "model (the articles: every 1,000 steps); logged, and warned about beyond grad_check_tolerance. 0: never.",
    )
    grad_check_tolerance: float = Field(
        default=1e-2, gt=0, le=1, description="Largest relative error between the two gradients that passes the check."
    )
    resume_despite_changes: bool = Field(
        default=False,
        description="Resume even when the global batch (tokens per step) or the training data differ from the "
        "checkpoint's; off, such a resume is refused, since its data order and schedule would silently shift.",
    )
    seed: Seed = Field(default=1234, description="Seed for initialisation and data order.")
    checkpoint_every: int = Field(
        le=MAX_STEPS, default=100, ge=1, description="Save a checkpoint every this many steps (and at the end)."
    )
    checkpoint_every_minutes: float | None = Field(
        default=60.0,
        gt=0,
        le=MAX_MINUTES,
        description="Also save when this many minutes have passed since the last save (the articles: hourly), "
        "so a slow run loses at most that much to a crash. Unset: by steps only.",
    )
    ephemeral_checkpoint_every: int | None = Field(
        default=None,
        ge=1,
        le=MAX_STEPS,
        description="Also save this often for recovery only (OLMo-core's ephemeral checkpoints): such a save is "
        "never announced or evaluated and is deleted once a newer one completes, so frequent saves cost one "
        "checkpoint of disk. Unset: none.",
    )
    async_checkpoints: bool = Field(
        default=False,
        description="Write each checkpoint's shards in the background: training stops only to copy its shards to "
        "CPU memory, and a save waits only for the one before it. Off: training waits for every write.",
    )
    eval_every: int = Field(
        le=MAX_STEPS, default=50, ge=1, description="Measure validation loss every this many steps (and at 0, end)."
    )
    eval_batches: int = Field(
        le=MAX_BATCHES, default=8, ge=1, description="Validation micro-batches per rank for each periodic eval."
    )
    log_every: int = Field(
        default=100,
        ge=1,
        le=MAX_STEPS,
        description="Log training metrics (lr, grad norm, tokens/s, MFU, memory) every this many steps; the loss "
        "goes to TensorBoard every step.",
    )
    peak_flops_per_device: float | None = Field(
        default=None,
        gt=0,
        le=MAX_FLOPS,
        description="The device's peak FLOP/s in the training precision (spec sheet), the denominator of MFU. "
        "Unset: measured at the first log with large matmuls.",
    )
    loss_spike_sigma: float = Field(
        default=6.0,
        gt=0,
        le=1000,
        description="Log a loss spike (and, on a stack, a `pretrain.training.loss-spike` event) when a step's loss is "
        "this many standard deviations above the mean of the last loss_spike_window steps.",
    )
    loss_spike_window: int = Field(default=128, ge=2, le=MAX_STEPS, description="Steps a loss spike is judged on.")
    straggler_check_every: int = Field(
        default=50,
        ge=0,
        le=MAX_STEPS,
        description="Every this many steps the ranks share their compute time per step; 0: never. A rank slower "
        "than straggler_factor x the others' median is logged (and a `pretrain.training.straggler` event).",
    )
    straggler_factor: float = Field(
        default=1.5, gt=1, le=1000, description="How much slower than the others' median a straggling rank is."
    )
    overfit_alarm_ratio: float = Field(
        default=1.3,
        gt=1,
        le=1000,
        description="Warn when validation perplexity exceeds the recent training perplexity by this factor: the "
        "model is memorising its training text.",
    )
    keep_last_checkpoints: int = Field(
        default=2,
        ge=1,
        le=MAX_CHECKPOINTS,
        description="Completed checkpoints kept; older ones are deleted once evaluated.",
    )
    keep_best_checkpoint: bool = Field(
        default=False, description="Also keep the checkpoint with the lowest validation loss, however old."
    )
    prune_waits_for_evaluation: bool = Field(
        default=True,
        description="Delete an old checkpoint only once its evaluation is recorded (done, or failed with a reason), "
        "so a slow evaluation queue never loses one. Off for runs nobody evaluates.",
    )
    max_unevaluated_checkpoints: int = Field(
        default=4,
        ge=1,
        le=MAX_CHECKPOINTS,
        description="With prune_waits_for_evaluation: while this many checkpoints await evaluation, a periodic save "
        "is skipped (logged); the final and SIGTERM saves never are. Disk then holds at most keep_last_checkpoints "
        "+ this many + 1 checkpoints however far evaluation falls behind, and training never waits for it.",
    )
    num_threads: int = Field(default=2, ge=1, le=512, description="torch intra-op threads per process.")
    nproc_per_node: int = Field(default=1, ge=1, le=64, description="Worker processes per node (torchrun).")
    nnodes: int = Field(default=1, ge=1, le=4096, description="Nodes in the job (torchrun).")
    rdzv_endpoint: str | None = Field(
        default=None, description="host:port of the c10d rendezvous; None runs torchrun --standalone on one node."
    )
    rdzv_id: str | None = Field(
        default=None, description="Rendezvous id shared by all nodes; None derives it from output_url."
    )
    backend: Literal["auto", "gloo", "nccl"] = Field(
        default="auto", description="Process group backend; auto: nccl on GPU."
    )
    tensor_parallel: int = Field(
        default=1,
        ge=1,
        le=64,
        description="Ranks each block's heads and MLP are split over (Megatron-style, DTensor); must divide the "
        "ranks and the heads. With more ranks than that, FSDP2 shards over the rest (a 2-D mesh).",
    )
    context_parallel: int = Field(
        default=1,
        ge=1,
        le=64,
        description="Ranks each sequence is sharded over along time (each a head and a tail chunk, so causal "
        "attention work is even); attention gathers the group's keys and values. For sequences whose activations "
        "do not fit one GPU. seq_len must cut into 2 x this many chunks; the ranks of a group read the same batch.",
    )
    pipeline_parallel: int = Field(
        default=1,
        ge=1,
        le=64,
        description="Pipeline stages the blocks are split over (torch.distributed.pipelining); the first stage "
        "holds the embedding, the last the head and the loss. With more ranks, tensor parallelism splits each "
        "stage and FSDP2 shards over the rest (a pp x dp x tp mesh).",
    )
    pipeline_schedule: PipelineSchedule = Field(
        default="1f1b",
        description="gpipe (all forwards, then all backwards: most activation memory) | 1f1b (one forward, one "
        "backward: activations of at most pipeline_parallel microbatches) | interleaved-1f1b (several stages per "
        "rank, a smaller bubble) | zero-bubble (interleaved, weight gradients deferred into the bubble).",
    )
    pipeline_microbatches: int | None = Field(
        default=None,
        ge=1,
        le=4096,
        description="Microbatches each micro_batch_size batch is cut into for the pipeline; at least the number of "
        "stages (fewer hang). Unset: the number of stages.",
    )
    pipeline_virtual_stages: int | None = Field(
        default=None,
        ge=1,
        le=64,
        description="interleaved-1f1b and zero-bubble: stages per rank (unset: 2); the others run one.",
    )
    pipeline_layers_per_stage: list[int] | None = Field(
        default=None,
        max_length=4096,
        description="Blocks of each stage in order, e.g. [3, 5] (the last stage also computes the head and loss); "
        "unset: as even as they go.",
    )
    strategy: Literal["ddp", "fsdp"] = Field(
        default="ddp", description="Data parallel wrapper: DDP or FSDP2 fully_shard."
    )
    gpu_memory_gib: float | None = Field(
        default=None,
        gt=0,
        le=4096,
        description="Memory of each GPU. Set, a run whose layout the planner estimates at more than 90 % of it is "
        "refused before launch, with the estimate (`pretrain plan` lists layouts that fit). Unset: no check.",
    )
    gradient_compression: GradientCompression = Field(
        default="none",
        description="DDP's gradient all-reduce compressed: fp16 or bf16 (half the bytes; bf16 needs NCCL), or "
        "powersgd (low rank with error feedback). For runs whose network bounds the step; none: exact.",
    )
    powersgd_rank: int = Field(default=2, ge=1, le=64, description="PowerSGD's approximation rank.")
    powersgd_start_step: int = Field(
        default=100, ge=2, le=MAX_STEPS, description="Steps of exact all-reduce before PowerSGD starts."
    )
    tokens_url: str = Field(
        default="outputs/demo/corpus/tokenize", description="Tokenization output root (holds data/*.parquet)."
    )
    tokenizer_url: str = Field(
        default="outputs/demo/corpus/tokenizer/tokenizer.model", description="SentencePiece model the shards use."
    )
    output_url: str = Field(
        default="runs/demo/train", description="Where checkpoints, TensorBoard logs and summary go."
    )

    @model_validator(mode="after")
    def _check_model_shape(self) -> TrainConfig:
        _, n_head, d_model = self.model_shape()
        if d_model % n_head or (d_model // n_head) % 2:
            raise ValueError(f"d_model {d_model} must split into {n_head} heads of even size (RoPE rotates pairs)")
        if self.moe_experts and self.moe_top_k > self.moe_experts:
            raise ValueError(f"moe_top_k {self.moe_top_k} exceeds the {self.moe_experts} experts")
        if self.moe_experts and (self.model_parallel or self.context_parallel > 1):
            raise ValueError("moe_experts runs with data and expert parallelism only (no tensor, pipeline or context)")
        self._check_expert_parallel()
        if self.n_kv_head is not None and n_head % self.n_kv_head:
            raise ValueError(f"n_kv_head {self.n_kv_head} must divide n_head {n_head} (each shares a group of queries)")
        if not 0 <= self.betas[0] < 1 or not 0 <= self.betas[1] < 1:
            raise ValueError(f"betas {self.betas} must lie in [0, 1)")
        self._check_layout()
        if self.gradient_compression != "none" and (self.strategy != "ddp" or self.model_parallel):
            raise ValueError(
                "gradient_compression is a DDP option: FSDP, tensor and pipeline parallelism reduce their own way"
            )
        if self.gradient_compression in NEEDS_NCCL and self.backend == "gloo":
            raise ValueError(f"gradient_compression {self.gradient_compression} needs the nccl backend (GPUs)")
        if self.precision == "fp16" and self.strategy == "fsdp":
            raise ValueError("precision fp16 with strategy fsdp needs a sharded gradient scaler: use bf16, or ddp")
        if self.nnodes > 1 and not self.rdzv_endpoint:
            raise ValueError("nnodes > 1 needs rdzv_endpoint (host:port of the rendezvous)")
        if self.warmup_steps >= self.max_steps:
            log.warning(
                "train.warmup_steps %d >= train.max_steps %d: the learning rate never reaches train.lr and never "
                "decays; warmup is usually 1-10%% of the run", self.warmup_steps, self.max_steps,
            )  # fmt: skip
        return self

    def _check_expert_parallel(self) -> None:
        """Expert parallelism needs experts to spread, ranks to spread them over and DDP; one line names each lack."""
        if self.expert_parallel == 1:
            return
        ranks = self.nproc_per_node * self.nnodes
        problems = [
            problem for problem, broken in (
                ("needs moe_experts", not self.moe_experts),
                (f"must divide moe_experts {self.moe_experts}", self.moe_experts % self.expert_parallel),
                (f"must divide the {ranks} ranks", ranks % self.expert_parallel),
                ("needs strategy ddp (FSDP would shard the experts again)", self.strategy != "ddp"),
                ("does not support precision fp16 (ranks would skip different steps)", self.precision == "fp16"),
                ("does not support gradient_compression", self.gradient_compression != "none"),
            ) if broken
        ]  # fmt: skip
        if problems:
            raise ValueError(f"expert_parallel {self.expert_parallel} " + "; ".join(problems))

    def _check_layout(self) -> None:
        """The parallel layout must fit the ranks and the model; one line names every problem."""
        problems = self.layout.problems(self.seq_len)
        problems += pipeline_problems(
            self.model_shape()[0], self.pipeline_parallel, self.pipeline_schedule, self.pipeline_virtual_stages,
            self.microbatches, self.micro_batch_size, self.pipeline_layers_per_stage,
        )  # fmt: skip
        if problems:
            raise ValueError("; ".join(problems))
        if self.layout.dp > 1 and self.model_parallel and self.strategy != "fsdp":
            raise ValueError("tensor or pipeline parallelism with data parallelism needs strategy fsdp (a mesh)")
        kinds = (("tensor", self.tensor_parallel), ("pipeline", self.pipeline_parallel),
                 ("context", self.context_parallel))  # fmt: skip
        for name, degree in kinds:
            unsupported = [
                what for what, on in (("objective masked", self.objective == "masked"),
                                      ("precision fp16", self.precision == "fp16" and name != "context"),
                                      ("dropout", self.dropout > 0 and name != "pipeline"),
                                      ("compile", self.compile and name == "pipeline")) if on
            ]  # fmt: skip
            if degree > 1 and unsupported:
                raise ValueError(f"{name} parallelism does not support {', '.join(unsupported)} yet")

    @property
    def layout(self) -> Layout:
        ranks = self.nproc_per_node * self.nnodes
        return Layout(ranks, pp=self.pipeline_parallel, cp=self.context_parallel, tp=self.tensor_parallel)

    @property
    def model_parallel(self) -> bool:
        """Whether the model itself is split (tensor or pipeline parallelism), not only replicated or sharded."""
        return self.tensor_parallel > 1 or self.pipeline_parallel > 1

    @property
    def microbatches(self) -> int:
        """Pipeline microbatches per micro-batch: as set, else one per stage."""
        stages = self.pipeline_parallel * stages_per_rank(self.pipeline_schedule, self.pipeline_virtual_stages)
        return self.pipeline_microbatches or stages

    def model_shape(self) -> tuple[int, int, int]:
        """(n_layer, n_head, d_model) after applying explicit values over the preset."""
        preset = MODEL_PRESETS[self.model] if self.model else (None, None, None)
        shape = (self.n_layer or preset[0], self.n_head or preset[1], self.d_model or preset[2])
        if None in shape:
            raise ValueError("without a model preset, n_layer, n_head and d_model must all be set")
        return shape  # type: ignore[return-value]

    def model_args(self, vocab_size: int) -> ModelArgs:
        """The network for a tokenizer of ``vocab_size`` pieces; the masked objective adds a [MASK] row."""
        n_layer, n_head, d_model = self.model_shape()
        masked = self.objective == "masked"
        return ModelArgs(
            vocab_size=vocab_size + masked, n_layer=n_layer, n_head=n_head, d_model=d_model, max_seq_len=self.seq_len,
            position_encoding=self.position_encoding, dropout=self.dropout, causal=not masked,
            mask_token_id=vocab_size if masked else None, parametrization=self.parametrization,
            mup_base_width=self.mup_base_width, rope_scaling=self.rope_scaling,
            rope_scaling_factor=self.rope_scaling_factor, rope_original_seq_len=self.rope_original_seq_len,
            block=self.block, n_kv_head=self.n_kv_head, moe_experts=self.moe_experts, moe_top_k=self.moe_top_k,
            moe_router=self.moe_router, moe_balance=self.moe_balance, moe_capacity_factor=self.moe_capacity_factor,
            moe_shared_expert=self.moe_shared_expert,
        )  # fmt: skip

    def peak_lr(self) -> float:
        """The lr warmup reaches: `lr`, or by the linear scaling rule (Goyal et al. 2017) `lr` x tokens per step /
        `lr_reference_batch_tokens`: a k times larger global batch gets k times the peak it was tuned at."""
        if self.lr_reference_batch_tokens is None:
            return self.lr
        return self.lr * self.tokens_per_step / self.lr_reference_batch_tokens

    @property
    def data_parallel_size(self) -> int:
        """Replicas that read different batches: the ranks of a tensor-parallel group or a pipeline share one."""
        return self.layout.dp

    @property
    def tokens_per_step(self) -> int:
        """Tokens consumed by one optimizer step across all ranks."""
        return self.seq_len * self.micro_batch_size * self.grad_accum_steps * self.data_parallel_size


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
