"""Attention of one rank's queries over blocks of keys through SDPA's fused CPU flash kernel, merged by their
log-sum-exp: the blockwise attention of context parallelism without materialising a block's score matrix.

Each block runs `aten._scaled_dot_product_flash_attention_for_cpu`, which returns its output and log-sum-exp; the
outputs merge weighted by exp(lse_block - lse). Backward calls the kernel's backward once per block with the merged
output and log-sum-exp (ring attention's backward): a block's share of the global softmax is exp(scores - lse), so
each block's query, key and value gradients come out exact without a second pass over the others.
"""

from __future__ import annotations

from typing import Any

import torch

_FORWARD = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu
_BACKWARD = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward


class MergedBlocks(torch.autograd.Function):
    """``q`` (B, H, Tq, D) over ``keys``/``values`` (N, B, H, Tk, D): N blocks, block i causal (its queries and
    keys the same positions) when ``causal[i]``, with the additive ``biases[i]`` (1, H, Tq, Tk) when given."""

    @staticmethod
    def forward(
        ctx: Any,
        q: torch.Tensor,
        keys: torch.Tensor,
        values: torch.Tensor,
        causal: tuple[bool, ...],
        biases: torch.Tensor | None,
        scale: float | None,
    ) -> torch.Tensor:
        outputs, lses = [], []
        for i in range(keys.shape[0]):
            mask = None if biases is None else biases[i]
            out, lse = _FORWARD(q, keys[i], values[i], 0.0, causal[i] and mask is None, attn_mask=mask, scale=scale)
            outputs.append(out)
            lses.append(lse)
        merged_lse = torch.logsumexp(torch.stack(lses), dim=0)  # (B, H, Tq)
        merged = torch.zeros_like(q)
        for out, lse in zip(outputs, lses, strict=True):
            merged += out * torch.exp(lse - merged_lse).unsqueeze(-1)
        ctx.save_for_backward(q, keys, values, merged, merged_lse, biases)
        ctx.causal, ctx.scale = causal, scale
        return merged

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        q, keys, values, merged, merged_lse, biases = ctx.saved_tensors
        grad_q = torch.zeros_like(q)
        grad_keys, grad_values = torch.zeros_like(keys), torch.zeros_like(values)
        for i in range(keys.shape[0]):
            mask = None if biases is None else biases[i]
            grad_q_i, grad_keys[i], grad_values[i] = _BACKWARD(
                grad.contiguous(), q, keys[i], values[i], merged, merged_lse, 0.0, ctx.causal[i] and mask is None,
                attn_mask=mask, scale=ctx.scale,
            )  # fmt: skip
            grad_q += grad_q_i
        return grad_q, grad_keys, grad_values, None, None, None
