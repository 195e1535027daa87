"""The articles' long-context claim, measured at the lengths this machine reaches: a model trained at a short length
evaluated at up to 8x it under each RoPE scaling, with and without a short extension run at twice the length.

A base model trains on shards packed at the short length; each scaling (factor = longest / trained length) is
evaluated as is, then after `--extension-steps` at the longer shards starting from the base's weights
(`train.checkpoint.init_from`). Reported per (scaling, extension, context length): the held-out loss of the last
position bucket (the positions only the longer context reaches) and the passkey accuracy averaged over depths.

    pretrain corpus --set pack.seq_len=512 ...   # the same corpus packed at 512 tokens (docs/training.md)
    python benchmarks/bench_long_context.py --short-tokens ROOT/tokenize-A --long-tokens ROOT/tokenize-B \
        --tokenizer ROOT/tokenizer-C/tokenizer.model --output /tmp/long-context
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "2")

import argparse
import logging
import statistics
import time
from typing import Any

from pretrain_core import storage
from pretrain_core.evaluate.long_context import evaluate_checkpoint_long_context
from pretrain_core.train.config import TrainConfig
from pretrain_core.train.model.args import RopeScaling
from pretrain_core.train.trainer import train

SCALINGS: tuple[RopeScaling, ...] = ("none", "linear", "ntk", "yarn", "llama3")


def _config(args: argparse.Namespace, **values: Any) -> TrainConfig:
    base: dict[str, Any] = {
        "model": "tiny", "micro_batch_size": 8, "warmup_steps": 10, "eval_every": 1000, "eval_batches": 4,
        "checkpoint_every_minutes": None, "log_every": 1000, "grad_check_every": 0, "num_threads": 2,
        "prune_waits_for_evaluation": False, "tokenizer_url": args.tokenizer, "peak_flops_per_device": 1e11,
    }  # fmt: skip
    return TrainConfig(**{**base, **values})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--short-tokens", required=True, help="shards packed at the trained length")
    parser.add_argument("--long-tokens", required=True, help="the same corpus packed at twice it (extension)")
    parser.add_argument("--tokenizer", required=True)
    parser.add_argument("--short", type=int, default=256)
    parser.add_argument("--steps", type=int, default=200, help="base model steps")
    parser.add_argument("--extension-steps", type=int, default=40)
    parser.add_argument("--lengths", type=int, nargs="+", default=[256, 512, 1024, 2048])
    parser.add_argument("--output", required=True, help="folder for the runs and long_context.json")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    started = time.perf_counter()
    base_url = storage.join(args.output, "base")
    train(_config(args, seq_len=args.short, max_steps=args.steps, checkpoint_every=args.steps,
                  tokens_url=args.short_tokens, output_url=base_url))  # fmt: skip
    factor = max(args.lengths) / args.short
    rows = []
    for scaling in SCALINGS:
        for extended in (False, True):
            source = base_url
            if extended:
                source = storage.join(args.output, f"extended-{scaling}")
                steps = args.extension_steps
                train(_config(args, seq_len=2 * args.short, max_steps=steps, checkpoint_every=steps, lr=1e-3,
                              tokens_url=args.long_tokens, output_url=source, rope_scaling=scaling,
                              rope_scaling_factor=factor, init_from=base_url))  # fmt: skip
            result, _ = evaluate_checkpoint_long_context(
                source,
                args.lengths,
                None if extended else scaling,
                None if extended else factor,
                args.long_tokens if extended else args.short_tokens,  # the shards the model's length was packed at
            )
            for length in args.lengths:
                last = [p for p in result.positions if p.length == length][-1]
                accuracy = statistics.mean(c.accuracy for c in result.passkey if c.length == length)
                rows.append({"scaling": scaling, "extended": extended, "length": length, "bucket": [last.start,
                             last.end], "loss": round(last.loss, 4), "passkey": accuracy})  # fmt: skip
                how = "extended" if extended else "as is"
                print(f"{scaling:>7} {how:>9} {length:>5} positions {last.start}-{last.end}: loss {last.loss:.3f}, "
                      f"passkey {accuracy:.0%}", flush=True)  # fmt: skip
    storage.write_json(storage.join(args.output, "long_context.json"), rows)
    print(f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
