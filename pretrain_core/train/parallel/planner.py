"""Which parallel layouts fit a model on a set of GPUs, with their memory per GPU and relative step time.

Memory per GPU is counted the way this trainer holds it: fp32 weights, gradients and AdamW's two moments (4 + 4 +
8 bytes per parameter, split by tensor and pipeline parallelism, sharded by FSDP2 over data parallelism), and the
activations a step keeps for its backward. The per-layer activation constants were measured on this trainer's
blocks with torch's MemTracker (`benchmarks/bench_planner.py` prints estimate against measurement; docs/training.md
records it): 19 values of d_model per token per block in fp32 (76 bytes x d_model), 52 bytes x d_model under bf16
autocast, one d_model (the block's input) with activation checkpointing. The head keeps the fp32 log-softmax
(vocabulary per token) and its backward two more of that size. A pipeline's first stage holds the activations of
every microbatch in flight (all of them under GPipe, pipeline_parallel of them under 1F1B); the planner gives a
pipeline one sequence per microbatch, the smallest bubble for its batch. The context-parallel
attention here materialises each block's scores (fp32, heads x local tokens x sequence, three copies kept).

The step time is relative and rough: compute at a nominal rate, divided over the GPUs, a third more with
activation checkpointing, stretched by the pipeline bubble ((pp - 1) / (microbatches x stages per rank)), plus
tensor- and context-parallel traffic at intra-node bandwidth and the gradient all-reduce at inter-node bandwidth,
and a fixed cost per forward or backward pass of a stage (what makes thousands of tiny microbatches slow).
It ranks layouts; it does not predict seconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import product
from typing import Any, Literal, get_args

from pretrain_core.train.config import TrainConfig
from pretrain_core.train.observe.flops import flops_per_token
from pretrain_core.train.parallel.layout import (
    LOOPED_SCHEDULES,
    Layout,
    PipelineSchedule,
    pipeline_problems,
    split_layers,
    stages_per_rank,
)
from pretrain_core.train.precision import Precision
from pretrain_core.train.sections.model import MODEL_PRESETS

GIB = 2**30
LAYER_BYTES_PER_WIDTH = {"fp32": 76, "bf16": 52, "fp16": 52}  # activations kept per token per block, x d_model
REPLICATED_SHARE = 6 / 19  # of those, the norms' inputs and outputs: not split by tensor parallelism
CHECKPOINTED_BYTES_PER_WIDTH = 4  # with activation checkpointing: the block's fp32 input
HEAD_WIDTHS = 3  # the final norm's input and output and the embedding's output, fp32, per token
SCORE_COPIES = 3  # context-parallel attention: scores, masked scores, exponentials (fp32)
DEFAULT_GPU_MEMORY_GIB = 80.0
HEADROOM = 0.9  # the allocator's fragmentation, CUDA context and NCCL buffers take the rest
MAX_GPUS = 4096  # the most `fewest_gpus` tries, as `train.launch.nnodes` x 8 allows
Strategy = Literal["ddp", "fsdp"]


@dataclass(frozen=True)
class Workload:
    """The model and the batch a layout must carry."""

    n_layer: int
    n_head: int
    d_model: int
    vocab_size: int
    seq_len: int
    global_batch: int  # sequences per optimizer step
    precision: Precision = "bf16"

    def block_params(self) -> int:
        return 12 * self.d_model**2 + 2 * self.d_model  # q, k, v, proj, MLP up and down; two norms

    def params(self) -> int:
        return self.n_layer * self.block_params() + self.vocab_size * self.d_model + self.d_model


@dataclass(frozen=True)
class Candidate:
    """A layout and how it cuts the batch."""

    layout: Layout
    micro_batch_size: int  # sequences per data-parallel replica per forward/backward
    grad_accum_steps: int
    activation_checkpointing: bool
    schedule: PipelineSchedule = "1f1b"
    microbatches: int = 1  # pipeline microbatches per micro-batch
    strategy: Strategy = "fsdp"

    @property
    def stages_per_rank(self) -> int:
        return stages_per_rank(self.schedule, None) if self.layout.pp > 1 else 1


@dataclass(frozen=True)
class MemoryEstimate:
    """Bytes per GPU on the busiest rank (the first or last pipeline stage)."""

    parameters: int
    gradients: int
    optimizer: int
    activations: int  # kept for backward at the start of the backward pass, with the head's temporaries

    @property
    def peak(self) -> int:
        """Weights and optimizer state always; then the larger of the activations (start of backward) and the
        gradients (end of backward, with the optimizer's temporaries of about the same size)."""
        return self.parameters + self.optimizer + max(self.activations, 2 * self.gradients)


@dataclass(frozen=True)
class Plan:
    candidate: Candidate
    memory: MemoryEstimate
    step_time: float  # arbitrary units; `relative_step_time` divides by the fastest


def _rank_layers(workload: Workload, candidate: Candidate) -> tuple[int, int]:
    """Blocks held by the first pipeline rank and by the last."""
    pp, per_rank = candidate.layout.pp, candidate.stages_per_rank
    ranges = split_layers(workload.n_layer, pp * per_rank)
    held = [sum(len(ranges[rank + pp * i]) for i in range(per_rank)) for rank in range(pp)]
    return held[0], held[-1]


def _in_flight(candidate: Candidate) -> float:
    """Microbatches whose activations the first pipeline rank holds at once, in units of its whole share of
    blocks (Interleaved 1F1B's warm-up holds (v + 1) pp - 2 chunks of 1 / v of it)."""
    pp, v, n = candidate.layout.pp, candidate.stages_per_rank, candidate.microbatches
    if pp == 1:
        return 1.0
    if candidate.schedule == "gpipe":
        return float(n)
    if candidate.schedule in LOOPED_SCHEDULES:
        return min(n * v, (v + 1) * pp - 2) / v
    return float(min(n, pp))


def estimate_memory(workload: Workload, candidate: Candidate) -> MemoryEstimate:
    """Memory per GPU of ``candidate`` training ``workload``: the larger of its first and last pipeline rank."""
    layout, h = candidate.layout, workload.d_model
    first_layers, last_layers = _rank_layers(workload, candidate)
    embedding = workload.vocab_size * h
    shard = layout.dp if candidate.strategy == "fsdp" else 1
    block = workload.block_params() / layout.tp
    tokens = candidate.micro_batch_size / candidate.microbatches * workload.seq_len / layout.cp  # per microbatch
    per_layer = LAYER_BYTES_PER_WIDTH[workload.precision] * h * tokens
    per_layer *= REPLICATED_SHARE + (1 - REPLICATED_SHARE) / layout.tp
    if layout.cp > 1:
        sequences = candidate.micro_batch_size / candidate.microbatches
        per_layer += SCORE_COPIES * 4 * workload.n_head / layout.tp * sequences * tokens * workload.seq_len
    kept = CHECKPOINTED_BYTES_PER_WIDTH * h * tokens if candidate.activation_checkpointing else per_layer
    head = 4 * tokens * (HEAD_WIDTHS * h + 3 * workload.vocab_size)  # log-softmax kept, two temporaries
    estimates = []
    for layers, first, last in ((first_layers, True, layout.pp == 1), (last_layers, layout.pp == 1, True)):
        params = (layers * block + (embedding if first or last else 0)) / shard
        if candidate.strategy == "fsdp" and layout.dp > 1:
            params += 2 * block  # two blocks gathered whole at a time (the one running and the prefetched one)
        flight = _in_flight(candidate) if first else 1.0
        edge = head if last else 4 * tokens * h  # the head's loss and temporaries, or the embedding's output
        # checkpointing recomputes one block at a time in backward, after the head's temporaries are freed
        edge = max(edge, per_layer) if candidate.activation_checkpointing else edge
        activations = flight * layers * kept + edge
        if workload.precision != "fp32":
            activations += 2 * layers * block  # autocast's cached half-precision copies of the weights
        grads = (layers * block + (embedding if first or last else 0)) / shard
        estimates.append(MemoryEstimate(int(4 * params), int(4 * grads), int(8 * grads), int(activations)))
    return max(estimates, key=lambda estimate: estimate.peak)


@dataclass(frozen=True)
class Hardware:
    """Nominal rates for ranking layouts (defaults: an H100 node; effective, not peak)."""

    gpu_memory_gib: float = DEFAULT_GPU_MEMORY_GIB
    flops: float = 400e12  # sustained bf16 training FLOP/s per GPU
    intra_node_bytes_per_s: float = 200e9  # NVLink, per GPU
    inter_node_bytes_per_s: float = 25e9  # one 200 Gb/s NIC per GPU
    gpus_per_node: int = 8
    pass_overhead_s: float = 5e-4  # fixed cost of one forward or backward of a stage chunk: launches, p2p handshakes


def step_time(workload: Workload, candidate: Candidate, hardware: Hardware) -> float:
    """Seconds per optimizer step at the nominal rates: compute, pipeline bubble and communication."""
    layout = candidate.layout
    flops = flops_per_token(
        workload.n_layer * workload.block_params(), workload.n_layer, workload.seq_len, workload.d_model,
        workload.vocab_size * workload.d_model,
    )  # fmt: skip
    tokens = workload.global_batch * workload.seq_len
    compute = flops * tokens / layout.world_size / hardware.flops
    compute *= 4 / 3 if candidate.activation_checkpointing else 1
    bubble = (layout.pp - 1) / (candidate.microbatches * candidate.stages_per_rank)
    act_bytes = 2 if workload.precision != "fp32" else 4
    rank_tokens = tokens / layout.dp / layout.cp
    layers = workload.n_layer / layout.pp
    tp_bytes = 4 * layers * rank_tokens * workload.d_model * act_bytes * 2 * (layout.tp - 1) / layout.tp
    cp_bytes = 2 * layers * tokens / layout.dp * 2 * workload.d_model * act_bytes * (layout.cp - 1) / layout.cp
    dp_bytes = 2 * 4 * workload.params() / (layout.tp * layout.pp) * (layout.dp - 1) / layout.dp
    dp_rate = hardware.intra_node_bytes_per_s if layout.world_size <= hardware.gpus_per_node else (
        hardware.inter_node_bytes_per_s
    )  # fmt: skip
    passes = 2 * candidate.grad_accum_steps * candidate.microbatches * candidate.stages_per_rank
    communication = (tp_bytes + cp_bytes) / hardware.intra_node_bytes_per_s + dp_bytes / dp_rate
    return compute * (1 + bubble) + communication + passes * hardware.pass_overhead_s


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def candidates(workload: Workload, gpus: int, hardware: Hardware) -> list[Candidate]:
    """Every layout of ``gpus`` the trainer can run for ``workload``: tensor and context parallelism inside a
    node, pipeline stages no more than blocks, the batch split evenly, with and without activation
    checkpointing, the smallest micro-batch count first."""
    found = []
    for pp, cp, tp in product(_divisors(gpus), repeat=3):
        layout = Layout(gpus, pp=pp, cp=cp, tp=tp)
        if layout.problems(workload.seq_len) or tp * cp > hardware.gpus_per_node or workload.n_head % tp:
            continue
        if pp > workload.n_layer or workload.global_batch % layout.dp:
            continue
        per_replica = workload.global_batch // layout.dp
        schedules: list[PipelineSchedule] = ["1f1b"] if pp == 1 else ["1f1b", "interleaved-1f1b"]
        for accum, schedule, checkpointing, strategy in product(
            _divisors(per_replica), schedules, (False, True), _strategies(layout)
        ):
            micro = per_replica // accum
            # a pipeline runs one sequence per microbatch: the smallest bubble for the batch
            candidate = Candidate(layout, micro, accum, checkpointing, schedule, micro if pp > 1 else 1, strategy)
            if pp > 1 and (pipeline_problems(workload.n_layer, pp, schedule, None, micro, micro, None)):
                continue
            found.append(candidate)
    return found


def _strategies(layout: Layout) -> tuple[Strategy, ...]:
    """The data-parallel wrappers the trainer runs a layout with: one replica needs none (ddp, the default, is a
    no-op there); tensor or pipeline parallelism beside data parallelism needs FSDP's mesh; else either."""
    if layout.dp == 1:
        return ("ddp",)
    if layout.tp > 1 or layout.pp > 1:
        return ("fsdp",)
    return get_args(Strategy)


def plan(workload: Workload, gpus: int, hardware: Hardware | None = None) -> list[Plan]:
    """The layouts that fit in ``hardware.gpu_memory_gib`` (with headroom), fastest first; for each layout and
    checkpointing choice the largest micro-batch that fits."""
    hardware = hardware or Hardware()
    budget = hardware.gpu_memory_gib * GIB * HEADROOM
    best: dict[tuple[Layout, str, bool, str], Plan] = {}
    for candidate in candidates(workload, gpus, hardware):
        key = (candidate.layout, candidate.schedule, candidate.activation_checkpointing, candidate.strategy)
        if key in best:
            continue  # a larger micro-batch of this layout already fits
        memory = estimate_memory(workload, candidate)
        if memory.peak <= budget:
            best[key] = Plan(candidate, memory, step_time(workload, candidate, hardware))
    return sorted(best.values(), key=lambda found: found.step_time)


def relative_step_times(plans: list[Plan]) -> list[float]:
    fastest = min((found.step_time for found in plans), default=1.0)
    return [found.step_time / fastest for found in plans]


def smallest_fit(workload: Workload, gpus: int, hardware: Hardware) -> float:
    """GiB per GPU the least hungry layout needs (one sequence per micro-batch at most, checkpointed): what to
    name when none fits."""
    fewest = min(
        (estimate_memory(workload, candidate).peak for candidate in candidates(workload, gpus, hardware)),
        default=math.inf,
    )
    return fewest / GIB / HEADROOM


def fewest_gpus(workload: Workload, hardware: Hardware, more_than: int = 1) -> int | None:
    """The fewest GPUs of ``hardware``'s memory on which some layout fits ``workload``: powers of two above
    ``more_than`` up to `MAX_GPUS`, whole nodes past one node (None: not even then)."""
    gpus = 1
    while gpus <= MAX_GPUS:
        if gpus > more_than and plan(workload, gpus, hardware):
            return gpus
        gpus *= 2
    return None


def largest_preset_that_fits(workload: Workload, gpus: int, hardware: Hardware) -> str | None:
    """The largest model preset that fits ``gpus`` GPUs at ``workload``'s sequence length, batch and vocabulary
    (None: not even the smallest)."""
    fitting = [
        name
        for name, (n_layer, n_head, d_model) in MODEL_PRESETS.items()
        if plan(Workload(n_layer, n_head, d_model, workload.vocab_size, workload.seq_len, workload.global_batch,
                         workload.precision), gpus, hardware)
    ]  # fmt: skip
    sizes = {name: Workload(*MODEL_PRESETS[name], workload.vocab_size, 1, 1).params() for name in fitting}
    return max(fitting, key=sizes.__getitem__, default=None)


def settings_of(candidate: Candidate, gpus_per_node: int) -> dict[str, Any]:
    """The `train.*` settings that run ``candidate`` (what `candidate_of` reads back): the launch over nodes of
    ``gpus_per_node``, the strategy, the degrees, the batch split and the pipeline's schedule."""
    layout = candidate.layout
    nodes = -(-layout.world_size // gpus_per_node)
    while layout.world_size % nodes:  # a GPU count that no number of full nodes gives: fewer per node
        nodes += 1
    settings: dict[str, Any] = {
        "nnodes": nodes,
        "nproc_per_node": layout.world_size // nodes,
        "strategy": candidate.strategy,
        "pipeline_parallel": layout.pp,
        "context_parallel": layout.cp,
        "tensor_parallel": layout.tp,
        "micro_batch_size": candidate.micro_batch_size,
        "grad_accum_steps": candidate.grad_accum_steps,
        "activation_checkpointing": candidate.activation_checkpointing,
    }
    if layout.pp > 1:
        settings |= {"pipeline_schedule": candidate.schedule, "pipeline_microbatches": candidate.microbatches}
    return settings


def workload_of(config: TrainConfig, vocab_size: int) -> Workload:
    n_layer, n_head, d_model = config.model.shape()
    global_batch = config.data.micro_batch_size * config.data.grad_accum_steps * config.data_parallel_size
    return Workload(n_layer, n_head, d_model, vocab_size, config.data.seq_len, global_batch, config.compute.precision)


def candidate_of(config: TrainConfig) -> Candidate:
    return Candidate(
        config.layout,
        config.data.micro_batch_size,
        config.data.grad_accum_steps,
        config.compute.activation_checkpointing,
        config.parallelism.pipeline_schedule,
        config.parallelism.microbatches if config.parallelism.pipeline_parallel > 1 else 1,
        config.parallelism.strategy,
    )


def check_fits(config: TrainConfig, vocab_size: int) -> MemoryEstimate:
    """The estimate for a run's own layout; a one-line error when `gpu_memory_gib` is set and it does not fit."""
    estimate = estimate_memory(workload_of(config, vocab_size), candidate_of(config))
    limit = config.launch.gpu_memory_gib
    if limit is not None and estimate.peak > limit * GIB * HEADROOM:
        raise ValueError(
            f"this layout needs about {estimate.peak / GIB:.1f} GiB per GPU (weights {estimate.parameters / GIB:.1f}, "
            f"gradients {estimate.gradients / GIB:.1f}, AdamW {estimate.optimizer / GIB:.1f}, activations "
            f"{estimate.activations / GIB:.1f}), more than {HEADROOM:.0%} of gpu_memory_gib {limit:g}: "
            "`pretrain plan` lists the layouts that fit"
        )
    return estimate
