"""Training FLOPs of the model's shapes: plain arithmetic, so the planner runs without torch."""

from __future__ import annotations


def flops_per_token(
    non_embedding_params: int, n_layer: int, seq_len: int, d_model: int, output_params: int = 0
) -> float:
    """Training FLOPs per token, forward and backward: 6 per weight plus attention's 12 x layers x sequence x width
    (PaLM, appendix B). ``output_params`` (vocabulary x width) adds the output projection's matmul, which llm.c and
    nanoGPT count even when its weight is tied to the embedding (a third of GPT-2 small's FLOPs); PaLM's count,
    without it, is what an MFU of non-embedding weights alone compares with."""
    return 6 * (non_embedding_params + output_params) + 12 * n_layer * seq_len * d_model
