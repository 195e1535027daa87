"""What the model learns to predict: the next token (causal, the default and the only one generation accepts), or
masked tokens (BERT's masked language model, which the first source article names beside it).

Masked: 15 % of the positions (at least one per sequence) are chosen; of those, 80 % become [MASK], 10 % a random
token, 10 % stay; the loss counts the chosen positions only (targets elsewhere are IGNORE). Attention is
bidirectional. The masks come from the generator given: torch's global RNG in training (saved in checkpoints, so
a resumed run draws the same masks), a fixed seed in validation and evaluation (the same positions every time).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from pretrain_core.train.model.args import ModelArgs

IGNORE = -100  # F.cross_entropy's ignore_index: positions that do not count
EVAL_MASK_SEED = 0  # validation and evaluation hide the same positions every time


@dataclass(frozen=True)
class Masking:
    """The masked objective's settings: the [MASK] id (also the size of the real vocabulary) and the rate."""

    token_id: int
    rate: float

    def apply(self, ids: torch.Tensor, generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        return mask_tokens(ids, self.token_id, self.token_id, self.rate, generator)


def masking_of(args: ModelArgs, rate: float) -> Masking | None:
    """The masking a model was built for; None for a causal model."""
    return None if args.causal or args.mask_token_id is None else Masking(args.mask_token_id, rate)


def held_out_generator(device: torch.device) -> torch.Generator:
    return torch.Generator(device=device).manual_seed(EVAL_MASK_SEED)


def mask_tokens(
    ids: torch.Tensor, mask_id: int, vocab_size: int, rate: float, generator: torch.Generator | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """(inputs, targets) for the masked objective from (B, T) token ids; ``vocab_size`` excludes [MASK]."""
    draw = torch.rand(ids.shape, generator=generator, device=ids.device)
    chosen = draw < rate
    no_choice = ~chosen.any(dim=1)
    chosen[no_choice, draw[no_choice].argmin(dim=1)] = True  # every sequence teaches something
    action = torch.rand(ids.shape, generator=generator, device=ids.device)
    random_ids = torch.randint(0, vocab_size, ids.shape, generator=generator, device=ids.device)
    inputs = torch.where(chosen & (action < 0.8), torch.full_like(ids, mask_id), ids)
    inputs = torch.where(chosen & (action >= 0.8) & (action < 0.9), random_ids, inputs)
    targets = torch.where(chosen, ids, torch.full_like(ids, IGNORE))
    return inputs, targets
