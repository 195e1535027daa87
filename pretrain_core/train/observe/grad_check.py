"""The periodic gradient check of the source articles: autograd's gradient against central finite differences.

On a float64 copy of the model (dropout off), for a random input and a seeded sample of parameter entries: if
backward were wrong (a custom op, a bad mixed-precision cast, a broken hook), the two would disagree far beyond
float64's rounding. The copy leaves training's weights, gradients and RNG untouched.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from pretrain_core.train.model.gpt import GPT

CHECK_EPS = 1e-6  # finite-difference step in float64


@dataclass(frozen=True)
class GradCheck:
    max_relative_error: float
    entries: int

    def passed(self, tolerance: float) -> bool:
        return self.max_relative_error <= tolerance


def gradient_check(model: GPT, entries: int = 8, seq_len: int = 8, seed: int = 0) -> GradCheck:
    """Compare autograd with (L(w + eps) - L(w - eps)) / 2 eps for ``entries`` sampled weights."""
    generator = torch.Generator().manual_seed(seed)
    probe = copy.deepcopy(model).to(device="cpu", dtype=torch.float64).eval()
    batch = torch.randint(0, probe.args.vocab_size, (1, min(seq_len, probe.args.max_seq_len) + 1), generator=generator)

    def loss() -> torch.Tensor:  # in float64 throughout (`cross_entropy` computes in float32)
        return F.cross_entropy(probe(batch[:, :-1]).flatten(0, 1), batch[:, 1:].flatten())

    params = [p for p in probe.parameters() if p.requires_grad]
    loss().backward()
    worst = 0.0
    for _ in range(entries):
        param = params[int(torch.randint(len(params), (1,), generator=generator))]
        index = int(torch.randint(param.numel(), (1,), generator=generator))
        analytic = float(param.grad.reshape(-1)[index]) if param.grad is not None else 0.0
        numeric = _central_difference(param, index, loss)
        worst = max(worst, abs(analytic - numeric) / max(abs(analytic), abs(numeric), 1e-8))
    return GradCheck(worst, entries)


@torch.no_grad()
def _central_difference(param: nn.Parameter, index: int, loss: object) -> float:
    flat = param.view(-1)
    original = float(flat[index])
    flat[index] = original + CHECK_EPS
    plus = float(loss())  # type: ignore[operator]
    flat[index] = original - CHECK_EPS
    minus = float(loss())  # type: ignore[operator]
    flat[index] = original
    return (plus - minus) / (2 * CHECK_EPS)
