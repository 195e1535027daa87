"""The loss curve of a training run as a PNG: training loss and validation loss against step.

Drawn from the progress lines the supervisor read (`monitor.TrainingMonitor`), on matplotlib's Agg canvas with the
object API (no display, no pyplot state). matplotlib is optional (`pretrain[eval]`): imported only when drawn.
"""

from __future__ import annotations

from pretrain_core.png_plot import finished_png, line_figure


def loss_curve_url(output_url: str) -> str:
    return output_url.rstrip("/") + "/loss_curve.png"


def render_loss_curve(train: list[tuple[int, float]], validation: list[tuple[int, float]], title: str) -> bytes:
    """PNG bytes of loss against step (nats, linear: the differences late in training are what one reads)."""
    figure, axes = line_figure()
    for label, points, marker in (("train", train, "."), ("validation", validation, "o")):
        if points:
            axes.plot([step for step, _ in points], [loss for _, loss in points], marker=marker, label=label)
    axes.set(title=title, xlabel="step", ylabel="loss (nats/token)")
    return finished_png(figure, axes)
