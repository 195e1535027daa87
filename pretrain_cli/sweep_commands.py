"""`pretrain sweep` (an Optuna study of proxy runs) and `pretrain coord-check` (µP's activation scales by width)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from pretrain_core import storage


def add_sweep_commands(commands: Any) -> None:
    sweep = commands.add_parser(
        "sweep",
        help="search training settings with an Optuna study of proxy runs (resumable, pruned)",
        description="Build the sweep's corpus (reusing finished stages), then run trials until --trials have "
        "finished: each a proxy training run under torchrun with settings the TPE sampler picks from the search "
        "space, stopped early when its validation loss trails the other trials' (median pruning). The study "
        "lives in SQLite under the output root (or study_url), so a rerun continues it. Writes report.md, "
        "trials.json, the optimisation history, parallel-coordinate and importance plots, and with transfer_to "
        "the best setting carried to a wider model under µP (transferred.yaml, for pretrain train --config). "
        "See docs/sweep.md.",
    )
    sweep.add_argument("--space", metavar="FILE", help="sweep YAML (default: the shipped CPU preset)")
    sweep.add_argument("--output-root", metavar="URL", help="override the file's output_root")
    sweep.add_argument("--trials", type=int, help="override the file's trial count")

    coord = commands.add_parser(
        "coord-check",
        help="plot activation scales by width under standard parametrization and µP",
        description="Train the same depth at several widths for a few steps at one learning rate (random tokens, "
        "AdamW), under standard parametrization and under µP, and plot each block's and the logits' mean "
        "|activation| against width: growing under standard, flat under µP when µP is right. Writes "
        "coord_check.png and coord_check.json.",
    )
    coord.add_argument("--output", required=True, metavar="URL", help="folder for the plot and the figures")
    coord.add_argument("--widths", type=int, nargs="+", default=[64, 128, 256, 512], help="d_model values")
    coord.add_argument("--steps", type=int, default=5, help="AdamW steps before measuring (default 5)")
    coord.add_argument("--lr", type=float, default=1e-2, help="learning rate at every width (default 0.01)")


def run_sweep(args: argparse.Namespace) -> int:
    from flows.sweep import sweep
    from pretrain_core.sweep.spec import CPU_PRESET, load_sweep

    updates = {"output_root": args.output_root, "trials": args.trials}
    spec = load_sweep(args.space or CPU_PRESET, {k: v for k, v in updates.items() if v is not None})
    report = sweep(spec)
    print(f"report: {report.report_url}")
    if report.best_set_line:
        print(f"best trial: pretrain train {report.best_set_line}")
    if report.transferred_url:
        print(f"transferred config: {report.transferred_url}")
    return 0


def run_coord_check(args: argparse.Namespace) -> int:
    from pretrain_core.train.observe.coord_check import (
        PARAMETRIZATIONS,
        CoordCheckSettings,
        coord_check,
        render_coord_check,
    )

    settings = CoordCheckSettings(widths=tuple(sorted(args.widths)), steps=args.steps, lr=args.lr,
                                  base_width=min(args.widths))  # fmt: skip
    check = coord_check(settings)
    storage.write_bytes(storage.join(args.output, "coord_check.png"), render_coord_check(check))
    storage.write_bytes(storage.join(args.output, "coord_check.json"), json.dumps(check.scales, indent=1).encode())
    for parametrization in PARAMETRIZATIONS:
        growth = check.growth(parametrization)
        print(f"{parametrization}: logits x{growth:.2f} from width {settings.widths[0]} to {settings.widths[-1]}")
    print(f"plot: {storage.join(args.output, 'coord_check.png')}")
    return 0
