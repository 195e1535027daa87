"""Tensor parallelism (Megatron-style) with DTensor: each block's attention heads and MLP hidden units are split
across the ranks of a tensor-parallel group.

q/k/v and the MLP's up projection are split by output columns (each rank computes whole heads and a slice of the
hidden units from the full input); the attention output projection and the MLP's down projection are split by
input rows, and their partial results are summed across the group (one all-reduce per sub-layer forward, one
backward); a mixture of experts splits each expert the same way. Embeddings, norms, routers and the tied head stay
replicated. Every rank of a group sees the same batch.
"""

from __future__ import annotations

from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor.parallel import ColwiseParallel, ParallelStyle, RowwiseParallel, parallelize_module

from pretrain_core.train.model.gpt import GPT, ModelArgs

ATTENTION_PLAN = {
    "attn.q": ColwiseParallel(),
    "attn.k": ColwiseParallel(),
    "attn.v": ColwiseParallel(),
    "attn.proj": RowwiseParallel(),
}
MLP_PLAN = {"up": ColwiseParallel(), "down": RowwiseParallel()}
GATED_MLP_PLAN = {**MLP_PLAN, "gate": ColwiseParallel()}


def block_plan(args: ModelArgs) -> dict[str, ParallelStyle]:
    """The block's styles by module: attention by heads; the MLP, or under a mixture of experts each expert and the
    shared one, by hidden units (the router stays replicated: every rank of a group routes the same tokens alike,
    so each expert's split computation sees the same rows on every rank)."""
    mlp = GATED_MLP_PLAN if args.block == "llama" else MLP_PLAN
    owners = [f"mlp.experts.{e}" for e in range(args.moe_experts)] if args.moe_experts else ["mlp"]
    if args.moe_experts and args.moe_shared_expert:
        owners.append("mlp.shared")
    return ATTENTION_PLAN | {f"{owner}.{name}": style for owner in owners for name, style in mlp.items()}


def apply_tensor_parallel(model: GPT, tp_mesh: DeviceMesh) -> None:
    """Shard every block of ``model`` in place over ``tp_mesh`` (1-D); heads and hidden units must split evenly."""
    size, args = tp_mesh.size(), model.args
    if args.n_head % size or args.kv_heads % size:
        raise ValueError(f"{args.n_head} attention heads do not split over {size} tensor-parallel ranks")
    hidden = args.expert_hidden if args.moe_experts else args.ffn_hidden
    if hidden % size:
        raise ValueError(f"an MLP of {hidden} hidden units does not split over {size} tensor-parallel ranks")
    plan = block_plan(args)
    for block in model.blocks.values():
        parallelize_module(block, tp_mesh, plan)
