"""Transforms of next-token logits (B, V) that shape what sampling and beam search may pick."""

from __future__ import annotations

import torch


def penalize_repetition(logits: torch.Tensor, seen: torch.Tensor, penalty: float) -> torch.Tensor:
    """CTRL's repetition penalty (Keskar et al. 2019): every token already in the text (``seen``, a (B, V) bool
    mask) becomes less likely; a positive logit is divided by ``penalty``, a negative one multiplied by it."""
    if penalty == 1.0:
        return logits
    penalized = torch.where(logits > 0, logits / penalty, logits * penalty)
    return torch.where(seen, penalized, logits)


def top_k_filter(logits: torch.Tensor, k: int) -> torch.Tensor:
    """Keep the k highest logits of each row (ties with the k-th stay), the rest become -inf."""
    if k >= logits.shape[-1]:
        return logits
    kth = torch.topk(logits, k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, float("-inf"))


def top_p_filter(logits: torch.Tensor, p: float) -> torch.Tensor:
    """Nucleus filtering (Holtzman et al. 2020): keep the smallest set of most likely tokens whose probability
    reaches ``p`` (the token that crosses p is in), the rest become -inf."""
    if p >= 1.0:
        return logits
    ordered, order = torch.sort(logits, dim=-1, descending=True)
    probs = torch.softmax(ordered.float(), dim=-1)
    mass_before = torch.cumsum(probs, dim=-1) - probs
    drop_sorted = mass_before >= p
    drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
    return logits.masked_fill(drop, float("-inf"))
