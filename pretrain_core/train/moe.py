"""A mixture-of-experts MLP: each token goes to its top-k experts (token choice) and their outputs are summed,
weighted by the router's gates.

- Router: a linear map to one score per expert, softmax (Switch, Mixtral) or sigmoid (DeepSeek-V3) in fp32; the top-k
  scores are the gates (renormalised to sum to one for sigmoid, and for softmax with k > 1).
- Balance: `loss`, Switch Transformer's auxiliary loss (experts x sum of token share x mean router probability,
  weighted by `moe_aux_weight`) plus the router z-loss (mean squared log-sum-exp of the scores, `moe_z_weight`); or
  `bias`, DeepSeek-V3's auxiliary-loss-free balancing: a per-expert bias added to the scores for selection only,
  nudged after each step towards the less loaded experts (`update_bias`).
- Capacity: with `moe_capacity_factor`, an expert takes at most factor x tokens x k / experts tokens per forward;
  the rest of its tokens are dropped (they pass through the residual only) and counted.
- A shared expert, when set, sees every token (DeepSeek-MoE).

Each layer keeps the last forward's auxiliary loss and expert loads for the trainer (`moe_aux_loss`, `moe_stats`).
Experts run one after another on their tokens (no expert parallelism yet).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from pretrain_core.train.model_args import ModelArgs

BIAS_RATE = 1e-3  # DeepSeek-V3's bias update speed


class MixtureOfExperts(nn.Module):
    expert_bias: torch.Tensor

    def __init__(self, args: ModelArgs, make_expert: Callable[[ModelArgs, int], nn.Module]) -> None:
        super().__init__()
        self.args = args
        self.router = nn.Linear(args.d_model, args.moe_experts, bias=False)
        self.experts = nn.ModuleList(make_expert(args, args.expert_hidden) for _ in range(args.moe_experts))
        self.shared = make_expert(args, args.expert_hidden) if args.moe_shared_expert else None
        self.register_buffer("expert_bias", torch.zeros(args.moe_experts), persistent=True)
        self.aux_loss: torch.Tensor | None = None
        self.load = torch.zeros(args.moe_experts)  # share of routed tokens per expert, last forward
        self.dropped = 0  # tokens over capacity, last forward

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        args = self.args
        shape = x.shape
        tokens = x.reshape(-1, shape[-1])  # (N, C)
        logits = self.router(tokens).float()  # (N, E)
        scores = logits.softmax(dim=-1) if args.moe_router == "softmax" else logits.sigmoid()
        chooser = scores + self.expert_bias if args.moe_balance == "bias" else scores
        _, chosen = chooser.topk(args.moe_top_k, dim=-1)  # (N, k)
        gates = scores.gather(-1, chosen)
        if args.moe_router == "sigmoid" or args.moe_top_k > 1:
            gates = gates / gates.sum(dim=-1, keepdim=True).clamp_min(1e-9)
        assigned = F.one_hot(chosen, args.moe_experts).sum(dim=1).float()  # (N, E): 1 where routed
        if args.moe_capacity_factor is not None:
            capacity = math.ceil(args.moe_capacity_factor * len(tokens) * args.moe_top_k / args.moe_experts)
            kept = (assigned.cumsum(dim=0) <= capacity) & (assigned > 0)  # the first tokens to arrive are kept
            self.dropped = int(assigned.sum() - kept.sum())
        else:
            kept = assigned > 0
            self.dropped = 0
        out = torch.zeros_like(tokens)
        for expert_id, expert in enumerate(self.experts):
            rows = kept[:, expert_id].nonzero(as_tuple=True)[0]
            if len(rows) == 0:
                continue
            gate = (gates * (chosen == expert_id)).sum(dim=-1)[rows]  # this expert's gate for each of its tokens
            out.index_add_(0, rows, (expert(tokens[rows]) * gate[:, None].to(tokens.dtype)).to(out.dtype))
        if self.shared is not None:
            out = out + self.shared(tokens)
        self.load = (assigned.sum(dim=0) / max(1, len(tokens) * args.moe_top_k)).detach().cpu()
        self.aux_loss = self._balance_loss(logits, scores, assigned)
        return out.reshape(shape)

    def _balance_loss(self, logits: torch.Tensor, scores: torch.Tensor, assigned: torch.Tensor) -> torch.Tensor:
        """Switch's load-balancing loss and the router z-loss (0 under bias balancing, which needs no loss)."""
        if self.args.moe_balance == "bias":
            return logits.new_zeros(())
        share = assigned.mean(dim=0) / self.args.moe_top_k  # fraction of routed tokens per expert
        probability = (scores / scores.sum(dim=-1, keepdim=True)).mean(dim=0)
        balance = self.args.moe_experts * (share * probability).sum()
        z_loss = torch.logsumexp(logits, dim=-1).square().mean()
        return self.args.moe_aux_weight * balance + self.args.moe_z_weight * z_loss

    @torch.no_grad()
    def update_bias(self) -> None:
        """Auxiliary-loss-free balancing: raise the bias of experts loaded below the mean, lower it above."""
        if self.args.moe_balance == "bias":
            mean = self.load.mean()
            self.expert_bias += BIAS_RATE * torch.sign(mean - self.load).to(self.expert_bias.device)


def moe_layers(model: nn.Module) -> list[MixtureOfExperts]:
    return [module for module in model.modules() if isinstance(module, MixtureOfExperts)]


def moe_aux_loss(model: nn.Module) -> torch.Tensor | None:
    """The balancing losses of every MoE layer's last forward, summed (None for a dense model)."""
    losses = [layer.aux_loss for layer in moe_layers(model) if layer.aux_loss is not None]
    return torch.stack(losses).sum() if losses else None


def moe_stats(model: nn.Module) -> dict[str, float]:
    """Per layer: the busiest expert's load over the mean (1 is perfect balance) and the tokens dropped."""
    stats = {}
    for index, layer in enumerate(moe_layers(model)):
        stats[f"moe/layer{index}_max_load_over_mean"] = float(layer.load.max() / layer.load.mean().clamp_min(1e-9))
        stats[f"moe/layer{index}_dropped_tokens"] = float(layer.dropped)
    return stats
