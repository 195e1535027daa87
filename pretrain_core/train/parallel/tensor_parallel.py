"""Tensor parallelism (Megatron-style) with DTensor: each block's attention heads and MLP hidden units are split
across the ranks of a tensor-parallel group.

q/k/v and the MLP's up projection are split by output columns (each rank computes whole heads and a slice of the
hidden units from the full input); the attention output projection and the MLP's down projection are split by
input rows, and their partial results are summed across the group (one all-reduce per sub-layer forward, one
backward). Embeddings, norms and the tied head stay replicated. Every rank of a group sees the same batch.
"""

from __future__ import annotations

from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

from pretrain_core.train.model.gpt import GPT

BLOCK_PLAN = {
    "attn.q": ColwiseParallel(),
    "attn.k": ColwiseParallel(),
    "attn.v": ColwiseParallel(),
    "attn.proj": RowwiseParallel(),
    "mlp.up": ColwiseParallel(),
    "mlp.down": RowwiseParallel(),
}
SWIGLU_PLAN = {**BLOCK_PLAN, "mlp.gate": ColwiseParallel()}


def apply_tensor_parallel(model: GPT, tp_mesh: DeviceMesh) -> None:
    """Shard every block of ``model`` in place over ``tp_mesh`` (1-D); heads must split evenly."""
    size = tp_mesh.size()
    if model.args.n_head % size or model.args.kv_heads % size:
        raise ValueError(f"{model.args.n_head} attention heads do not split over {size} tensor-parallel ranks")
    plan = SWIGLU_PLAN if model.args.block == "llama" else BLOCK_PLAN
    for block in model.blocks.values():
        parallelize_module(block, tp_mesh, plan)
