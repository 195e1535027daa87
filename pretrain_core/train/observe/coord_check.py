"""The coordinate check of muTransfer (Yang et al. 2022, figure 5): train a few steps at several widths and watch
the typical size of each layer's activations. Under standard parametrization, after a few Adam steps at one
learning rate, the wider models' activations (the logits first) grow with width, which is why their best learning
rate shrinks; under µP they stay flat, which is why it transfers.

Each width trains the same depth and heads for a few steps on one fixed batch of random tokens (the check is about
scales, not about what is learnt), AdamW at one learning rate, and records after the last step the mean absolute
value of every block's output and of the logits, averaged over seeds. The batch is a few tokens: µP's limit is a
width large against the tokens of a step (their gradient is then of low rank, and Adam's update lines up with the
activations); with hundreds of tokens against widths of a few hundred, µP's activations drift down with width.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import get_args

import torch
from torch import nn

from pretrain_core.train.model.args import ModelArgs, Parametrization
from pretrain_core.train.model.gpt import GPT, cross_entropy
from pretrain_core.train.optim import parameter_groups

PARAMETRIZATIONS: tuple[Parametrization, ...] = get_args(Parametrization)


@dataclass(frozen=True)
class CoordCheckSettings:
    widths: tuple[int, ...] = (64, 128, 256, 512)
    n_layer: int = 4
    n_head: int = 4
    vocab_size: int = 512
    seq_len: int = 8
    batch_size: int = 1
    steps: int = 5
    lr: float = 1e-2
    seeds: tuple[int, ...] = (0, 1, 2)
    base_width: int = 64


@dataclass
class CoordCheck:
    """Mean |activation| by parametrization, then layer name, then width (after the last step)."""

    settings: CoordCheckSettings
    scales: dict[str, dict[str, dict[int, float]]] = field(default_factory=dict)

    def growth(self, parametrization: Parametrization, layer: str = "logits") -> float:
        """How many times larger the layer's activations are at the widest width than at the narrowest."""
        by_width = self.scales[parametrization][layer]
        widths = sorted(by_width)
        return by_width[widths[-1]] / by_width[widths[0]]


def _scales(settings: CoordCheckSettings, parametrization: Parametrization, width: int, seed: int) -> dict[str, float]:
    torch.manual_seed(seed)
    args = ModelArgs(
        vocab_size=settings.vocab_size, n_layer=settings.n_layer, n_head=settings.n_head, d_model=width,
        max_seq_len=settings.seq_len, parametrization=parametrization, mup_base_width=settings.base_width,
    )  # fmt: skip
    model = GPT(args)
    optimizer = torch.optim.AdamW(parameter_groups(model, 0.0, settings.lr, args.width_mult))
    batch = torch.randint(0, settings.vocab_size, (settings.batch_size, settings.seq_len + 1))
    recorded: dict[str, float] = {}

    def record(name: str) -> object:
        def hook(_module: nn.Module, _inputs: object, output: torch.Tensor) -> None:
            recorded[name] = float(output.detach().abs().mean())

        return hook

    for layer, block in model.blocks.items():
        block.register_forward_hook(record(f"block {layer}"))  # type: ignore[arg-type]
    for _ in range(settings.steps):
        optimizer.zero_grad(set_to_none=True)
        logits = model(batch[:, :-1])
        cross_entropy(logits, batch[:, 1:]).backward()
        optimizer.step()
    with torch.no_grad():
        recorded["logits"] = float(model(batch[:, :-1]).abs().mean())
    return recorded


def coord_check(settings: CoordCheckSettings | None = None) -> CoordCheck:
    """Train every width under both parametrizations and record the activation scales."""
    settings = settings or CoordCheckSettings()
    check = CoordCheck(settings)
    for parametrization in PARAMETRIZATIONS:
        layers: dict[str, dict[int, float]] = {}
        for width in settings.widths:
            runs = [_scales(settings, parametrization, width, seed) for seed in settings.seeds]
            for name in runs[0]:
                layers.setdefault(name, {})[width] = sum(run[name] for run in runs) / len(runs)
        check.scales[parametrization] = layers
    return check


def render_coord_check(check: CoordCheck) -> bytes:
    """PNG: one panel per parametrization, mean |activation| against width (both logarithmic), a line per layer."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(11, 4.2))
    FigureCanvasAgg(figure)
    figure.subplots_adjust(left=0.07, right=0.98, top=0.88, bottom=0.13, wspace=0.2)
    axes = figure.subplots(1, 2, sharey=True)
    settings = check.settings
    for axis, parametrization in zip(axes, PARAMETRIZATIONS, strict=True):
        for layer, by_width in check.scales[parametrization].items():
            widths = sorted(by_width)
            axis.plot(widths, [by_width[w] for w in widths], marker="o", label=layer)
        axis.set_xscale("log", base=2)
        axis.set_yscale("log")
        axis.set(
            title=f"{parametrization}: logits x{check.growth(parametrization):.1f} from width {settings.widths[0]} "
            f"to {settings.widths[-1]}",
            xlabel="width (d_model)",
            ylabel=f"mean |activation| after {settings.steps} steps at lr {settings.lr:g}",
        )
        axis.legend(fontsize="small")
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=80, metadata={"Software": None})
    return buffer.getvalue()
