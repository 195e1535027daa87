"""Run every stage's evaluation on its labelled set and lay the figures out: ours beside the baseline, with bars.

The stage evaluators live in sibling modules, one per stage, each `evaluate(set_dir, limit) -> list[Figure]`.
"""

from __future__ import annotations

import importlib
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pretrain_eval.stage_quality import PARTS
from pretrain_eval.stage_quality.figures import OURS, Figure

LABELLED_ROOT = Path(__file__).resolve().parents[2] / "data" / "labelled"  # in a checkout of the repo


@dataclass(frozen=True)
class PartResult:
    part: str
    figures: list[Figure]
    seconds: float


def evaluate_part(part: str, labelled_root: Path = LABELLED_ROOT, limit: int | None = None) -> PartResult:
    """Import the part's evaluator lazily (each pulls in its stage) and run it on `<labelled_root>/<part>`."""
    if part not in PARTS:
        raise ValueError(f"unknown stage-report part {part!r}; choose from {', '.join(PARTS)}")
    evaluate: Callable[..., list[Figure]] = importlib.import_module(f"pretrain_eval.stage_quality.{part}").evaluate
    started = time.perf_counter()
    figures = evaluate(str(labelled_root / part), limit=limit)
    return PartResult(part, figures, time.perf_counter() - started)


def misses(figures: Sequence[Figure]) -> list[Figure]:
    """Our figures below their bar."""
    return [f for f in figures if f.meets_bar is False]


def _ordered(figures: Sequence[Figure]) -> list[Figure]:
    """Group by (stage, metric, group) so each of our rows is followed by the baselines' rows for the same slice."""
    first_seen: dict[tuple[str, str, str], int] = {}
    for i, f in enumerate(figures):
        first_seen.setdefault((f.stage, f.metric, f.group), i)
    return sorted(figures, key=lambda f: (first_seen[(f.stage, f.metric, f.group)], f.system != OURS, f.system))


def _verdict(figure: Figure) -> str:
    return {True: "ok", False: "MISS", None: ""}[figure.meets_bar]


def _value(figure: Figure) -> str:
    """Counts as integers, rates with four decimals."""
    whole = math.isfinite(figure.value) and figure.value == int(figure.value)
    return f"{figure.value:g}" if whole or abs(figure.value) >= 1000 else f"{figure.value:.4f}"


def render_text(figures: Sequence[Figure]) -> str:
    """A fixed-width table for the terminal."""
    rows = [("stage", "metric", "group", "system", "value", "bar", "", "n")]
    rows += [
        (f.stage, f.metric, f.group, f.system, _value(f), str(f.bar or ""), _verdict(f), str(f.support or ""))
        for f in _ordered(figures)
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows)


def render_markdown(figures: Sequence[Figure]) -> str:
    """The same table in Markdown, for docs/."""
    lines = ["| stage | metric | group | system | value | bar | | n |", "|---|---|---|---|---:|---|---|---:|"]
    lines += [
        f"| {f.stage} | {f.metric} | {f.group} | {f.system} | {_value(f)} | {f.bar or ''} | {_verdict(f)} | "
        f"{f.support or ''} |"
        for f in _ordered(figures)
    ]
    return "\n".join(lines)
