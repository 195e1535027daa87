"""How the ranks share the work: tensor, context, pipeline, expert and data parallelism, and DDP's gradient
compression. The layout they make with the ranks is checked where the ranks are known (`TrainConfig`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from pretrain_core.config_base import StrictModel
from pretrain_core.limits import MAX_STEPS
from pretrain_core.train.parallel.compression import GradientCompression
from pretrain_core.train.parallel.layout import PipelineSchedule, stages_per_rank


class ParallelismConfig(StrictModel):
    """The parallel degrees and their options; data parallelism takes the ranks the others leave."""

    expert_parallel: int = Field(
        default=1,
        ge=1,
        le=512,
        description="Data-parallel ranks each MoE layer's experts are spread over (each holds moe_experts / this "
        "many; tokens travel to their experts by all-to-all). Must divide the ranks and moe_experts; DDP only.",
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
    gradient_compression: GradientCompression = Field(
        default="none",
        description="DDP's gradient all-reduce compressed: fp16 or bf16 (half the bytes; bf16 needs NCCL), or "
        "powersgd (low rank with error feedback). For runs whose network bounds the step; none: exact.",
    )
    powersgd_rank: int = Field(default=2, ge=1, le=64, description="PowerSGD's approximation rank.")
    powersgd_start_step: int = Field(
        default=100, ge=2, le=MAX_STEPS, description="Steps of exact all-reduce before PowerSGD starts."
    )

    @property
    def model_parallel(self) -> bool:
        """Whether the model itself is split (tensor or pipeline parallelism), not only replicated or sharded."""
        return self.tensor_parallel > 1 or self.pipeline_parallel > 1

    @property
    def microbatches(self) -> int:
        """Pipeline microbatches per micro-batch: as set, else one per stage."""
        stages = self.pipeline_parallel * stages_per_rank(self.pipeline_schedule, self.pipeline_virtual_stages)
        return self.pipeline_microbatches or stages
