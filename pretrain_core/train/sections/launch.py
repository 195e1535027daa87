"""How the processes start: threads per process, processes per node, nodes and their rendezvous, the backend."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from pretrain_core.config_base import StrictModel


class LaunchConfig(StrictModel):
    """torchrun's settings and each process's threads."""

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
    gpu_memory_gib: float | None = Field(
        default=None,
        gt=0,
        le=4096,
        description="Memory of each GPU. Set, a run whose layout the planner estimates at more than 90 % of it is "
        "refused before launch, with the estimate (`pretrain plan` lists layouts that fit). Unset: no check.",
    )

    @property
    def ranks(self) -> int:
        return self.nproc_per_node * self.nnodes
