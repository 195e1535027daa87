"""A mixture of experts against the dense model with the same active parameters, at equal tokens, over seeds: the
articles name MoE as the next architecture; this measures what it buys at the demo's scale.

The dense model is the `tiny` preset; the MoE replaces each block's MLP by `--experts` experts of the dense width /
`--top-k`, a token visiting `--top-k` of them, so a token costs what it costs dense (plus the router). Both train
the same steps on the same shards with each seed. Printed per model: final validation loss (mean and spread over
seeds), parameters in all and active per token, training throughput per core, and the ratio MoE / dense.

    pretrain corpus    # the demo's token shards under outputs/demo/corpus
    python benchmarks/bench_moe.py --output /tmp/moe
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "2")

import argparse
import logging
import statistics
from typing import Any

import torch

from pretrain_core import storage
from pretrain_core.train.checkpoint.catalog import latest_checkpoint
from pretrain_core.train.checkpoint.store import load_model
from pretrain_core.train.config import TrainConfig
from pretrain_core.train.trainer import train


def _run(args: argparse.Namespace, name: str, seed: int, **values: Any) -> dict[str, Any]:
    config = TrainConfig(
        model="tiny", seed=seed, max_steps=args.steps, micro_batch_size=8, warmup_steps=args.steps // 10,
        eval_every=args.steps, eval_batches=16, checkpoint_every=args.steps, checkpoint_every_minutes=None,
        log_every=1000, grad_check_every=0, num_threads=torch.get_num_threads(), peak_flops_per_device=1e11,
        prune_waits_for_evaluation=False, tokens_url=args.tokens, tokenizer_url=args.tokenizer,
        output_url=storage.join(args.output, f"{name}-seed{seed}"), **values,
    )  # fmt: skip
    summary = train(config).summary
    model, _ = load_model(str(latest_checkpoint(config.output_url)))
    return {
        "model": name, "seed": seed, "validation_loss": summary["final_validation_loss"],
        "tokens_per_s": summary["tokens_per_second"], "tokens_seen": summary["tokens_seen"],
        "params": model.num_params(), "active_params": model.non_embedding_params(),
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", default="outputs/demo/corpus/tokenize")
    parser.add_argument("--tokenizer", default="outputs/demo/corpus/tokenizer/tokenizer.model")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--experts", type=int, default=8)
    parser.add_argument("--top-k", type=int, default=2)
    parser.add_argument("--output", required=True, help="folder for the runs and moe.json")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    moe = {"moe_experts": args.experts, "moe_top_k": args.top_k}
    rows = []
    for seed in args.seeds:
        rows.append(_run(args, "dense", seed))
        rows.append(_run(args, f"moe-{args.experts}x-top{args.top_k}", seed, **moe))
    storage.write_json(storage.join(args.output, "moe.json"), {"steps": args.steps, "runs": rows})
    cores = torch.get_num_threads()
    summary = {}
    print(f"{args.steps} steps, seeds {args.seeds}, {cores} threads")
    print("| model | validation loss (mean ± sd) | params | active non-embedding | tokens/s per core |")
    print("|---|---|---|---|---|")
    for name in dict.fromkeys(row["model"] for row in rows):
        runs = [row for row in rows if row["model"] == name]
        losses = [row["validation_loss"] for row in runs]
        speed = statistics.mean(row["tokens_per_s"] for row in runs) / cores
        summary[name] = (statistics.mean(losses), speed)
        print(
            f"| {name} | {statistics.mean(losses):.4f} ± {statistics.stdev(losses) if len(losses) > 1 else 0:.4f} "
            f"| {runs[0]['params']:,} | {runs[0]['active_params']:,} | {speed:,.0f} |"
        )
    (dense_loss, dense_speed), (moe_loss, moe_speed) = summary.values()
    print(f"MoE - dense validation loss {moe_loss - dense_loss:+.4f}")
    print(f"throughput MoE / dense {moe_speed / dense_speed:.2f}x")
    print(f"tokens per run: {rows[0]['tokens_seen']:,}")


if __name__ == "__main__":
    main()
