"""AdamW with the usual split: weight decay on weight matrices only, never on norms, biases or embeddings."""

from __future__ import annotations

import torch
from torch import nn

from pretrain_core.train.config import TrainConfig
from pretrain_core.train.sections.optimizer import OptimizerConfig


def parameter_groups(
    model: nn.Module, weight_decay: float, lr: float, width_mult: float = 1.0
) -> list[dict[str, object]]:
    """Decay 2-D+ weights of Linear layers; keep norms, biases and the (tied) embedding undecayed. The first group,
    the hidden matrices, steps at lr / ``width_mult`` (µP's Adam rule; 1 under standard parametrization).

    Decaying the embedding shrinks rare tokens' vectors toward zero just because they get few gradient updates.
    """
    embedding_ids = {  # the output head is the embedding, tied: a pipeline's last stage holds it alone
        id(m.weight) for name, m in model.named_modules() if isinstance(m, nn.Embedding) or name == "lm_head"
    }
    decay: list[nn.Parameter] = []
    no_decay: list[nn.Parameter] = []
    for param in model.parameters():
        if not param.requires_grad:
            continue
        (decay if param.dim() >= 2 and id(param) not in embedding_ids else no_decay).append(param)
    return [
        {"params": decay, "weight_decay": weight_decay, "lr": lr / width_mult},
        {"params": no_decay, "weight_decay": 0.0, "lr": lr},
    ]


def build_adamw(
    model: nn.Module, config: OptimizerConfig, peak_lr: float, width_mult: float = 1.0
) -> torch.optim.AdamW:
    """AdamW at the peak lr; under µP the hidden matrices (the decayed group) take lr / width multiplier, so the
    lr tuned at the base width transfers to wider models (muTransfer, Yang et al. 2022, Adam's table)."""
    return torch.optim.AdamW(
        parameter_groups(model, config.weight_decay, peak_lr, width_mult),
        lr=peak_lr,
        betas=config.betas,
        eps=config.eps,
        weight_decay=config.weight_decay,
    )


def build_optimizer(model: nn.Module, config: TrainConfig) -> torch.optim.AdamW:
    """The run's AdamW: its optimizer section at the run's peak lr and the model's µP width multiplier."""
    return build_adamw(model, config.optimizer, config.peak_lr(), config.model.width_mult)
