"""AdamW with the usual split: weight decay on weight matrices only, never on norms, biases or embeddings."""

from __future__ import annotations

import torch
from torch import nn

from pretrain_core.train.config import TrainConfig


def parameter_groups(model: nn.Module, weight_decay: float) -> list[dict[str, object]]:
    """Decay 2-D+ weights of Linear layers; keep norms, biases and the (tied) embedding undecayed.

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
        {"params": decay, "weight_decay": weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]


def build_optimizer(model: nn.Module, config: TrainConfig) -> torch.optim.AdamW:
    return torch.optim.AdamW(
        parameter_groups(model, config.weight_decay),
        lr=config.peak_lr(),
        betas=config.betas,
        eps=config.eps,
        weight_decay=config.weight_decay,
    )
