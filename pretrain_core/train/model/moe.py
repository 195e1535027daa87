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
Under data parallelism the loads are counted over every rank's tokens (global-batch balancing, as Megatron's), so
the balancing loss and the bias are those of the whole batch; under expert parallelism (`expert_parallel`) each
rank holds some experts and the routed tokens travel to them and back by all-to-all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import partial
from typing import TYPE_CHECKING, Any

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

from pretrain_core.train.model.args import ModelArgs

if TYPE_CHECKING:
    from pretrain_core.train.parallel.expert_parallel import ExpertShard

BIAS_RATE = 1e-3  # DeepSeek-V3's bias update speed


class MixtureOfExperts(nn.Module):
    expert_bias: torch.Tensor

    def __init__(self, args: ModelArgs, make_expert: Callable[[ModelArgs, int], nn.Module]) -> None:
        super().__init__()
        self.args = args
        self.router = nn.Linear(args.d_model, args.moe_experts, bias=False)
        # keyed by expert number: under expert parallelism a rank keeps some, under the unsplit model's names
        self.experts = nn.ModuleDict({str(e): make_expert(args, args.expert_hidden) for e in range(args.moe_experts)})
        self.shared = make_expert(args, args.expert_hidden) if args.moe_shared_expert else None
        self.register_buffer("expert_bias", torch.zeros(args.moe_experts), persistent=True)
        self.aux_loss: torch.Tensor | None = None
        self.load = torch.zeros(args.moe_experts)  # share of routed tokens per expert, last forward
        self.dropped = 0  # tokens over capacity, last forward
        self.shard: ExpertShard | None = None  # expert parallelism: the group this layer's experts are spread over
        self.count_group: dist.ProcessGroup | None = None  # data parallelism: the ranks whose loads are summed

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
            share = torch.full((), args.moe_capacity_factor * args.moe_top_k / args.moe_experts, device=x.device)
            capacity = torch.ceil(share * tokens.shape[0])  # a tensor, so an exported graph keeps it per batch
            kept = (assigned.cumsum(dim=0) <= capacity) & (assigned > 0)  # the first tokens to arrive are kept
        else:
            kept = assigned > 0
        if torch.compiler.is_exporting():
            out = self._every_expert(tokens, chosen, gates, kept)
        else:
            out = self._routed(tokens, chosen, gates, kept)
            self.dropped = int(assigned.sum() - kept.sum())
            counts = assigned.sum(dim=0)
            if self.count_group is not None:
                dist.all_reduce(counts, group=self.count_group)  # balance over the whole batch of every rank
            self.load = (counts / counts.sum().clamp_min(1)).detach().cpu()
            self.aux_loss = self._balance_loss(logits, scores, self.load.to(scores.device))
            if self.training and torch.is_grad_enabled() and args.moe_balance == "loss":
                out = _WithBalancingLoss.apply(out, self.aux_loss, _BALANCING_SCALE.get())
        if self.shared is not None:
            out = out + self.shared(tokens)
        return out.reshape(shape)

    def _routed(
        self, tokens: torch.Tensor, chosen: torch.Tensor, gates: torch.Tensor, kept: torch.Tensor
    ) -> torch.Tensor:
        """Each expert on the tokens routed to it (on this rank, or by all-to-all on the rank holding it), the
        outputs weighted by their gates and summed per token."""
        # the kept (token, slot) pairs, ordered by expert (tokens in order within one): each expert's rows are a run
        token_ids, slots = kept.gather(1, chosen).nonzero(as_tuple=True)
        experts = chosen[token_ids, slots]
        order = experts.sort(stable=True).indices
        token_ids, experts, gate = token_ids[order], experts[order], gates[token_ids, slots][order]
        per_expert = torch.bincount(experts, minlength=self.args.moe_experts)
        if self.shard is None:
            routed = run_experts(self.experts, tokens[token_ids], per_expert)
        else:
            routed = self.shard.exchange(tokens[token_ids], per_expert, partial(run_experts, self.experts))
        weighted = (routed * gate[:, None].to(routed.dtype)).to(tokens.dtype)
        return torch.zeros_like(tokens).index_add_(0, token_ids, weighted)

    def _every_expert(
        self, tokens: torch.Tensor, chosen: torch.Tensor, gates: torch.Tensor, kept: torch.Tensor
    ) -> torch.Tensor:
        """The same sum with every expert on every token and the unchosen weighted 0: no shape depends on the
        routing, so graph exporters (ONNX) can trace it; E / k times the expert FLOPs."""
        weights = torch.zeros_like(kept, dtype=gates.dtype).scatter(1, chosen, gates) * kept
        out = torch.zeros_like(tokens)
        for index, expert in enumerate(self.experts.values()):
            out = out + expert(tokens) * weights[:, index, None].to(tokens.dtype)
        return out

    def _balance_loss(self, logits: torch.Tensor, scores: torch.Tensor, share: torch.Tensor) -> torch.Tensor:
        """Switch's load-balancing loss (``share``: each expert's fraction of the routed tokens) and the router
        z-loss; 0 under bias balancing, which needs no loss."""
        if self.args.moe_balance == "bias":
            return logits.new_zeros(())
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


def run_experts(experts: nn.ModuleDict, rows: torch.Tensor, per_expert: torch.Tensor) -> torch.Tensor:
    """Each expert on its run of ``rows`` (ordered by expert, ``per_expert`` rows each). An expert with no rows
    still runs (on none), so its gradient is zero rather than missing and every rank's gradients line up."""
    chunks = rows.split(per_expert.tolist())
    return torch.cat([expert(chunk) for expert, chunk in zip(experts.values(), chunks, strict=True)])


_BALANCING_SCALE: ContextVar[float] = ContextVar("balancing_scale", default=1.0)


@contextmanager
def balancing_loss_scale(scale: float) -> Iterator[None]:
    """Inside, each layer's balancing loss enters backward with weight ``scale``: what the main loss is multiplied
    by on its way to the gradients (1 / micro-batches, times fp16's loss scale). Entered around a forward and its
    backward, whatever runs it: a step, or a pipeline schedule in whose loss an earlier stage's layers have no
    place."""
    token = _BALANCING_SCALE.set(scale)
    try:
        yield
    finally:
        _BALANCING_SCALE.reset(token)


class _WithBalancingLoss(torch.autograd.Function):
    """The layer's output unchanged forward; backward, the balancing loss's gradient joins as if the loss had been
    added to the objective (Megatron's MoEAuxLossAutoScaler): the layer trains on it wherever the objective is."""

    @staticmethod
    def forward(ctx: Any, out: torch.Tensor, aux_loss: torch.Tensor, scale: float) -> torch.Tensor:
        ctx.save_for_backward(aux_loss)
        ctx.scale = scale
        return out.view_as(out)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, None]:
        (aux_loss,) = ctx.saved_tensors
        return grad, torch.full_like(aux_loss, ctx.scale), None


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
