"""Does the best learning rate transfer across width? The tiny preset's depth (4 blocks, 4 heads) at two widths,
under standard parametrization and under µP (base width = the narrowest), trained on the same token shards for the
same steps at a grid of learning rates and several seeds; the final validation loss of each run.

muTransfer's claim (Yang et al. 2022): under µP the optimum stays put as width grows, under standard parametrization
it moves to smaller rates. Printed: the mean validation loss per rate, the best rate per width, and how many grid
steps it moved; written: the figures as JSON and a plot (loss against rate, a line per width, a panel per
parametrization). Runs in this process, one after another (a run's cost does not depend on the others).

    python benchmarks/bench_mup_transfer.py --tokens-url outputs/demo/corpus/tokenize \
        --tokenizer-url outputs/demo/corpus/tokenizer/tokenizer.model --output docs/images/mup_transfer
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "2")

import argparse
import io
import json
import logging
import statistics
import tempfile
import time
from pathlib import Path

from pretrain_core import storage
from pretrain_core.train.config import TrainConfig
from pretrain_core.train.trainer import train

PARAMETRIZATIONS = ("standard", "mup")


def _run(args: argparse.Namespace, parametrization: str, width: int, lr: float, seed: int, root: str) -> float:
    config = TrainConfig(
        model=None, n_layer=args.n_layer, n_head=args.n_head, d_model=width, seq_len=args.seq_len,
        micro_batch_size=args.micro_batch, max_steps=args.steps, warmup_steps=args.steps // 10, lr=lr, seed=seed,
        parametrization=parametrization, mup_base_width=min(args.widths), eval_every=args.steps,
        eval_batches=args.eval_batches, checkpoint_every=args.steps, checkpoint_every_minutes=None,
        log_every=args.steps, grad_check_every=0, num_threads=args.threads, peak_flops_per_device=1e11,
        prune_waits_for_evaluation=False, tokens_url=args.tokens_url, tokenizer_url=args.tokenizer_url,
        output_url=f"{root}/{parametrization}-{width}-{lr:g}-{seed}",
    )  # fmt: skip
    loss = train(config).summary["final_validation_loss"]
    storage.remove(config.output_url)
    return float(loss) if loss is not None else float("nan")


def _plot(results: dict[str, dict[str, dict[str, float]]], lrs: list[float]) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(11, 4.2))
    FigureCanvasAgg(figure)
    figure.subplots_adjust(left=0.07, right=0.98, top=0.9, bottom=0.13, wspace=0.15)
    axes = figure.subplots(1, 2, sharey=True)
    for axis, parametrization in zip(axes, PARAMETRIZATIONS, strict=True):
        for width, by_lr in results[parametrization].items():
            axis.plot(lrs, [by_lr[f"{lr:g}"] for lr in lrs], marker="o", label=f"width {width}")
        axis.set_xscale("log")
        axis.set(title=parametrization, xlabel="learning rate", ylabel="final validation loss (mean over seeds)")
        axis.legend()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=80, metadata={"Software": None})
    return buffer.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens-url", default="outputs/demo/corpus/tokenize")
    parser.add_argument("--tokenizer-url", default="outputs/demo/corpus/tokenizer/tokenizer.model")
    parser.add_argument("--widths", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--lrs", type=float, nargs="+", default=[1e-3, 2e-3, 4e-3, 8e-3, 1.6e-2, 3.2e-2])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--micro-batch", type=int, default=4)
    parser.add_argument("--seq-len", type=int, default=256)
    parser.add_argument("--eval-batches", type=int, default=8)
    parser.add_argument("--n-layer", type=int, default=4)
    parser.add_argument("--n-head", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--output", default=None, help="write OUTPUT.json and OUTPUT.png")
    args = parser.parse_args()
    if not storage.exists(args.tokens_url):
        raise SystemExit(f"no token shards at {args.tokens_url}: run the demo first (README) or pass --tokens-url")
    logging.basicConfig(level=logging.WARNING)
    lrs = sorted(args.lrs)
    results: dict[str, dict[str, dict[str, float]]] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="mup-transfer-") as root:
        for parametrization in PARAMETRIZATIONS:
            for width in sorted(args.widths):
                by_lr = {}
                for lr in lrs:
                    losses = [_run(args, parametrization, width, lr, seed, root) for seed in range(args.seeds)]
                    by_lr[f"{lr:g}"] = statistics.mean(losses)
                    print(f"{parametrization:>8} width {width:>4} lr {lr:<8g} loss {by_lr[f'{lr:g}']:.4f} "
                          f"(seeds {', '.join(f'{x:.4f}' for x in losses)})", flush=True)  # fmt: skip
                results.setdefault(parametrization, {})[str(width)] = by_lr
    runs = len(PARAMETRIZATIONS) * len(args.widths) * len(lrs) * args.seeds
    print(f"{time.perf_counter() - started:.0f} s for {runs} runs")
    for parametrization in PARAMETRIZATIONS:
        best = {width: min(by_lr, key=lambda lr: by_lr[lr]) for width, by_lr in results[parametrization].items()}
        steps = [lrs.index(float(lr)) for lr in best.values()]
        print(f"{parametrization}: best lr by width {best}; moved {steps[-1] - steps[0]:+d} grid steps")
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(f"{args.output}.json").write_text(json.dumps({"args": vars(args), "results": results}, indent=1))
        Path(f"{args.output}.png").write_bytes(_plot(results, lrs))


if __name__ == "__main__":
    main()
