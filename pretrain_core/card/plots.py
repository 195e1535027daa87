"""The data card's figures, drawn from the `DataCard` alone (PNG bytes through `png_plot`; matplotlib from the eval
extra, imported when drawing): one function a figure, each returning None when it has nothing to show."""

from __future__ import annotations

from collections.abc import Callable

from pretrain_core.card.collect import DataCard
from pretrain_core.card.stats import SCORE_BINS
from pretrain_core.png_plot import finished_png, line_figure

TOP = 15  # bars a ranking shows at most; the rest are summed as "other"


def _ranked(values: dict[str, float], top: int = TOP) -> dict[str, float]:
    ordered = sorted(values.items(), key=lambda kv: (-kv[1], kv[0]))
    shown = dict(ordered[:top])
    rest = sum(value for _, value in ordered[top:])
    return shown | ({"other": rest} if rest else {})


def _bars(values: dict[str, float], title: str, xlabel: str, share: bool = False) -> bytes | None:
    """Horizontal bars, largest on top; as percentages of the total when ``share``."""
    if not values or not any(values.values()):
        return None
    ranked = _ranked(values)
    total = sum(values.values())
    labels = [label if len(label) <= 48 else label[:45] + "…" for label in ranked]
    numbers = [100 * v / total if share else v for v in ranked.values()]
    figure, axes = line_figure(8, 1.6 + 0.32 * len(ranked), left=0.42)
    axes.barh(range(len(ranked)), numbers, color="#4c72b0")
    axes.set_yticks(range(len(ranked)), labels, fontsize=8)
    axes.invert_yaxis()
    axes.set_title(title)
    axes.set_xlabel(xlabel)
    return finished_png(figure, axes)


def licences(card: DataCard) -> bytes | None:
    return _bars(card.tokens_by_licence, "Tokens by licence (mixture, copies counted)", "% of tokens", share=True)


def sources(card: DataCard) -> bytes | None:
    return _bars(card.tokens_by_source, "Tokens by source", "% of document tokens", share=True)


def languages(card: DataCard) -> bytes | None:
    return _bars(card.tokens_by_language, "Tokens by language", "% of document tokens", share=True)


def mixture(card: DataCard) -> bytes | None:
    """Each domain's target share beside its realised one."""
    if not card.mixture:
        return None
    domains = list(card.mixture)
    figure, axes = line_figure(8, 3.6)
    positions = range(len(domains))
    axes.bar([p - 0.2 for p in positions], [100 * card.mixture[d].target for d in domains], 0.4, label="target")
    axes.bar([p + 0.2 for p in positions], [100 * card.mixture[d].realised for d in domains], 0.4, label="realised")
    axes.set_xticks(list(positions), domains)
    axes.set_ylabel("% of training tokens")
    axes.set_title("Mixture: target and realised shares")
    return finished_png(figure, axes)


def drops(card: DataCard) -> bytes | None:
    """Documents dropped, by stage and reason."""
    return _bars(
        {f"{stage.name}: {reason}": n for stage in card.stages for reason, n in stage.dropped.items()},
        "Documents dropped, by stage and reason", "documents",
    )  # fmt: skip


def quality(card: DataCard) -> bytes | None:
    """Each domain's quality-score distribution, with the bucket cut-offs."""
    if not card.quality_histogram:
        return None
    figure, axes = line_figure(8, 4)
    centres = [(i + 0.5) / SCORE_BINS for i in range(SCORE_BINS)]
    for domain, counts in card.quality_histogram.items():
        total = sum(counts) or 1
        axes.step(centres, [100 * c / total for c in counts], where="mid", label=f"{domain} ({int(total)} docs)")
    for cutoff in card.quality_cutoffs:
        axes.axvline(cutoff, color="black", linestyle="--", linewidth=1)
    axes.set_xlim(0, 1)
    axes.set_xlabel("quality score (dashed: tail | middle | head cut-offs)")
    axes.set_ylabel("% of the domain's documents")
    axes.set_title("Quality scores by domain")
    return finished_png(figure, axes)


def clusters(card: DataCard) -> bytes | None:
    """Kept documents by the size of the duplicate cluster they stand for (log scale)."""
    if not card.cluster_sizes:
        return None
    figure, axes = line_figure(8, 3.4)
    positions = range(len(card.cluster_sizes))
    axes.bar(positions, list(card.cluster_sizes.values()), color="#4c72b0")
    axes.set_xticks(list(positions), list(card.cluster_sizes))
    axes.set_yscale("log")
    axes.set_xlabel("documents in the cluster (the kept one and its duplicates)")
    axes.set_ylabel("kept documents")
    axes.set_title("Duplicate clusters")
    return finished_png(figure, axes)


def bytes_per_token(card: DataCard) -> bytes | None:
    return _bars(card.bytes_per_token, "Tokenizer: UTF-8 bytes per token, by language", "bytes per token")


FIGURES: dict[str, tuple[str, Callable[[DataCard], bytes | None]]] = {
    "licences": ("Tokens by licence", licences),
    "mixture": ("Mixture targets and realised shares", mixture),
    "sources": ("Tokens by source", sources),
    "languages": ("Tokens by language", languages),
    "drops": ("Drops by stage and reason", drops),
    "quality": ("Quality scores by domain", quality),
    "clusters": ("Duplicate clusters", clusters),
    "bytes_per_token": ("Bytes per token", bytes_per_token),
}  # the one list of figures: name → (caption, drawing)


def draw_all(card: DataCard) -> dict[str, bytes]:
    """Every figure with something to show, by name; none when matplotlib is not installed."""
    try:
        import matplotlib  # noqa: F401  (the eval extra)
    except ModuleNotFoundError:
        return {}
    drawn = {name: draw(card) for name, (_, draw) in FIGURES.items()}
    return {name: png for name, png in drawn.items() if png is not None}
