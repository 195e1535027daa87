"""Rotary position frequencies, and the ways to stretch them past the length a model was trained at.

RoPE rotates each pair of query/key channels by position x frequency; a model trained on T tokens has only seen the
angles of positions below T. Every scaling maps longer contexts back onto angles the model knows:

- `linear` (position interpolation, Chen et al. 2023): every frequency divided by the factor;
- `ntk` (NTK-aware, bloc97 2023): the base raised to base x factor^(d / (d - 2)), so high frequencies (local order)
  barely change while the lowest is divided by the factor;
- `yarn` (Peng et al. 2023): frequencies whose wavelength fits the original context many times are kept, those longer
  than it are interpolated, a linear ramp between (beta_fast 32, beta_slow 1 rotations), and attention sharpened by
  the temperature 0.1 ln(factor) + 1 applied to cos and sin;
- `llama3` (Meta 2024): the same three bands split at wavelengths of original / 4 and original / 1, smoothed between.

A factor of 1 leaves every method equal to plain RoPE.
"""

from __future__ import annotations

import math

import torch

from pretrain_core.train.model.args import RopeScaling

YARN_BETA_FAST, YARN_BETA_SLOW = 32.0, 1.0
LLAMA3_LOW_FREQ_FACTOR, LLAMA3_HIGH_FREQ_FACTOR = 1.0, 4.0


def inverse_frequencies(head_dim: int, base: float) -> torch.Tensor:
    """(D/2,) rotation speeds of plain RoPE: base^(-2i/D)."""
    return 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim))


def _ramp(value: torch.Tensor, low: float, high: float) -> torch.Tensor:
    return ((value - low) / (high - low)).clamp(0.0, 1.0)


def scaled_frequencies(
    head_dim: int, base: float, scaling: RopeScaling, factor: float, original_seq_len: int
) -> tuple[torch.Tensor, float]:
    """(D/2,) frequencies under ``scaling`` by ``factor`` for a model trained on ``original_seq_len`` tokens, and
    the multiplier of cos and sin (YaRN's attention temperature; 1 for the others)."""
    inv_freq = inverse_frequencies(head_dim, base)
    if scaling == "none" or factor == 1.0:
        return inv_freq, 1.0
    if scaling == "linear":
        return inv_freq / factor, 1.0
    if scaling == "ntk":
        return inverse_frequencies(head_dim, base * factor ** (head_dim / (head_dim - 2))), 1.0
    rotations = original_seq_len * inv_freq / (2 * math.pi)  # turns each pair makes over the original context
    if scaling == "yarn":
        keep = _ramp(rotations, YARN_BETA_SLOW, YARN_BETA_FAST)  # 1: fast (local) pairs kept, 0: interpolated
        return inv_freq / factor * (1 - keep) + inv_freq * keep, 0.1 * math.log(factor) + 1.0
    keep = _ramp(rotations, LLAMA3_LOW_FREQ_FACTOR, LLAMA3_HIGH_FREQ_FACTOR)  # llama3: wavelength against original
    return inv_freq / factor * (1 - keep) + inv_freq * keep, 1.0
