"""The one way our line plots become PNG bytes: matplotlib's object API on the Agg canvas (no display, no pyplot
state), fixed margins and resolution, no timestamp in the file (the same data gives the same bytes).
matplotlib is optional (`pretrain[eval]`): imported only when a plot is drawn."""

from __future__ import annotations

import io
from typing import Any


def line_figure(width: float = 8, height: float = 4.5, left: float = 0.1) -> tuple[Any, Any]:
    """A figure with one set of axes, margins fixed (matplotlib's layout engines cost more than drawing); a wider
    ``left`` margin leaves room for the long labels of a horizontal bar chart."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height))
    FigureCanvasAgg(figure)
    figure.subplots_adjust(left=left, right=0.97, top=0.9, bottom=0.12)
    return figure, figure.add_subplot()


def finished_png(figure: Any, axes: Any) -> bytes:
    """Grid, a legend when anything was drawn, and the PNG bytes (80 dpi)."""
    axes.grid(alpha=0.3)
    if axes.get_legend_handles_labels()[1]:
        axes.legend(loc="upper right")
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=80, metadata={"Software": None})
    return buffer.getvalue()
