"""How the ranks of a run are split: pipeline (pp) x data (dp) x context (cp) x tensor (tp) parallel degrees, and
the rules a layout must follow. The config refuses a broken layout before any process starts, the planner lists
only layouts that pass, and the device mesh is built from it in this order (tp innermost: its all-reduces are the
most frequent, so its ranks are neighbours on one node).

Pipeline schedules are torch.distributed.pipelining's; the looped ones put several stages on each rank
(`stages_per_rank`): rank r holds stages r, r + pp, r + 2 pp ...
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

PipelineSchedule = Literal["gpipe", "1f1b", "interleaved-1f1b", "zero-bubble"]
MESH_DIMS = ("pp", "dp", "cp", "tp")
# schedules that run several stages per rank (looped): the rest run exactly one
LOOPED_SCHEDULES: frozenset[str] = frozenset({"interleaved-1f1b", "zero-bubble"})


@dataclass(frozen=True)
class Layout:
    """Degrees of each kind of parallelism; their product is the world size."""

    world_size: int
    pp: int = 1
    cp: int = 1
    tp: int = 1

    @property
    def dp(self) -> int:
        """Data-parallel replicas: the ranks left over once pp, cp and tp are placed."""
        return self.world_size // (self.pp * self.cp * self.tp)

    @property
    def mesh_shape(self) -> tuple[int, int, int, int]:
        return (self.pp, self.dp, self.cp, self.tp)

    def problems(self, seq_len: int | None = None) -> list[str]:
        """Why this layout cannot run on its world size (and sequences of ``seq_len``) (empty: it can)."""
        product = self.pp * self.cp * self.tp
        problems = []
        if self.world_size % product:
            problems.append(
                f"pipeline_parallel {self.pp} x context_parallel {self.cp} x tensor_parallel {self.tp} = {product} "
                f"does not divide the {self.world_size} ranks"
            )
        if self.cp > 1 and seq_len is not None and seq_len % (2 * self.cp):
            problems.append(f"seq_len {seq_len} does not cut into 2 x context_parallel {self.cp} equal chunks")
        return problems


def stages_per_rank(schedule: PipelineSchedule, virtual_stages: int | None) -> int:
    """Stages each rank holds: 1 for GPipe and 1F1B, ``virtual_stages`` (default 2) for the looped schedules."""
    if schedule in LOOPED_SCHEDULES:
        return virtual_stages or 2
    return 1


def split_layers(n_layer: int, n_stages: int, layers_per_stage: list[int] | None = None) -> list[range]:
    """The blocks of each stage: as given, or as even as they go with the remainder on the earliest stages (the
    last stage also runs the output projection and the loss)."""
    if layers_per_stage is not None:
        counts = list(layers_per_stage)
    else:
        base, extra = divmod(n_layer, n_stages)
        counts = [base + (stage < extra) for stage in range(n_stages)]
    starts = [sum(counts[:stage]) for stage in range(n_stages)]
    return [range(start, start + count) for start, count in zip(starts, counts, strict=True)]


def pipeline_problems(
    n_layer: int,
    pp: int,
    schedule: PipelineSchedule,
    virtual_stages: int | None,
    microbatches: int,
    micro_batch_size: int,
    layers_per_stage: list[int] | None,
) -> list[str]:
    """Why a pipeline cannot run (empty: it can). Fewer microbatches than stages is refused: the schedules hang or
    fail mid-step with it (users of torchtitan report both)."""
    if pp == 1:
        return [] if virtual_stages is None and layers_per_stage is None else [
            "pipeline_virtual_stages and pipeline_layers_per_stage need pipeline_parallel > 1"
        ]  # fmt: skip
    problems = []
    if schedule not in LOOPED_SCHEDULES and virtual_stages not in (None, 1):
        problems.append(f"pipeline_schedule {schedule} runs one stage per rank: unset pipeline_virtual_stages")
    n_stages = pp * stages_per_rank(schedule, virtual_stages)
    if microbatches < n_stages:
        problems.append(f"{microbatches} pipeline microbatches are fewer than the {n_stages} stages")
    if micro_batch_size % microbatches:
        problems.append(f"micro_batch_size {micro_batch_size} does not split into {microbatches} microbatches")
    if schedule in LOOPED_SCHEDULES and microbatches % pp:
        problems.append(f"pipeline_schedule {schedule} needs microbatches ({microbatches}) a multiple of {pp}")
    if layers_per_stage is not None:
        if len(layers_per_stage) != n_stages or sum(layers_per_stage) != n_layer or min(layers_per_stage) < 1:
            problems.append(
                f"pipeline_layers_per_stage {layers_per_stage} must give each of the {n_stages} stages at least one "
                f"of the {n_layer} blocks"
            )
    elif n_layer < n_stages:
        problems.append(f"{n_layer} blocks do not fill {n_stages} pipeline stages")
    return problems
