"""Activation checkpointing: peak memory and step time of our GPT with and without it, same model, same batch.

Each variant runs in a fresh process (peak RSS is a high-water mark that only grows): the resident set is read
after building the model and batch, then training steps run, and the peak over them minus that reading is what
training adds: gradients and AdamW's moments (the same in both variants) plus the activations kept for backward
(what checkpointing cuts). Token ids are random: memory and step cost do not depend on the text. Times are CPU
seconds of the steps after the first, so per core.

    python benchmarks/bench_activation_memory.py --preset small --seq-len 512 --batch-size 8
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import json
import resource
import subprocess
import sys
import time

import psutil
import torch

from pretrain_core.train.model.gpt import GPT, ModelArgs, cross_entropy
from pretrain_core.train.sections.model import MODEL_PRESETS


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports kB


def measure(preset: str, seq_len: int, batch_size: int, vocab_size: int, steps: int, recompute: bool) -> dict:
    """One variant, in this process: extra peak MB over the built model and batch, CPU seconds per step."""
    torch.manual_seed(0)
    n_layer, n_head, d_model = MODEL_PRESETS[preset]
    model = GPT(ModelArgs(vocab_size, n_layer, n_head, d_model, seq_len)).train()
    model.activation_checkpointing = recompute
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    batch = torch.randint(0, vocab_size, (batch_size, seq_len + 1))

    def step() -> None:
        loss = cross_entropy(model(batch[:, :-1]), batch[:, 1:])
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    base = psutil.Process().memory_info().rss / 2**20
    step()  # allocates gradients and the optimizer's moments
    started = time.process_time()
    for _ in range(steps):
        step()
    seconds = (time.process_time() - started) / steps
    return {"extra_peak_mb": _peak_mb() - base, "base_mb": base, "seconds_per_step": seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", default="small", choices=sorted(MODEL_PRESETS))
    parser.add_argument("--seq-len", type=int, default=512)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--vocab-size", type=int, default=8000)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--variant", choices=["plain", "checkpointed"], help=argparse.SUPPRESS)  # child process
    args = parser.parse_args()
    shape = (args.preset, args.seq_len, args.batch_size, args.vocab_size, args.steps)
    if args.variant:
        print(json.dumps(measure(*shape, recompute=args.variant == "checkpointed")))
        return
    results = {}
    for variant in ("plain", "checkpointed"):
        child = subprocess.run(
            [sys.executable, __file__, *sys.argv[1:], "--variant", variant], capture_output=True, text=True, check=True
        )
        results[variant] = json.loads(child.stdout.strip().splitlines()[-1])
    plain, checkpointed = results["plain"], results["checkpointed"]
    print(f"{args.preset}, seq {args.seq_len} x batch {args.batch_size}, {args.steps} steps, 1 thread")
    for variant, result in results.items():
        print(
            f"  {variant:>12}: training adds {result['extra_peak_mb']:7.1f} MB to {result['base_mb']:.0f} MB, "
            f"{result['seconds_per_step']:.3f} s/step"
        )
    saved = plain["extra_peak_mb"] - checkpointed["extra_peak_mb"]
    print(
        f"  checkpointing saves {saved:.0f} MB of peak ({saved / plain['extra_peak_mb']:.0%} of what training adds), "
        f"step time x{checkpointed['seconds_per_step'] / plain['seconds_per_step']:.2f}"
    )


if __name__ == "__main__":
    main()
