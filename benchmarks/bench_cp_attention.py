"""Context parallelism's attention: peak memory and CPU time of one rank's blockwise attention, forward and
backward, through SDPA's fused CPU flash kernel (`fused_blocks.py`, what a CPU run uses now) against the
materialised blocks it replaced (`context_parallel._plain`), at long sequences.

One rank of a CP 2 group: its half of each sequence (a head and a tail chunk) attends over the whole sequence's
keys and values, causal, with the group's keys already gathered. Each (variant, length) runs in a fresh process
(peak RSS is a high-water mark): the resident set is read after building the inputs, and the peak over forward and
backward minus that reading is what attention adds. Random inputs: cost does not depend on the values.

    python benchmarks/bench_cp_attention.py --lengths 8192 16384 --heads 8 --head-dim 64
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

from pretrain_core.train.parallel import context_parallel
from pretrain_core.train.parallel.context_parallel import SequenceShard

VARIANTS = {"fused": context_parallel._fused, "plain": context_parallel._plain}
CP = 2


def _measure(variant: str, length: int, heads: int, head_dim: int) -> dict[str, float]:
    generator = torch.Generator().manual_seed(0)
    shard = SequenceShard.of(length, CP, 0, None, torch.device("cpu"))
    q = torch.randn(1, heads, length // CP, head_dim, generator=generator, requires_grad=True)
    keys = torch.randn(1, heads, length, head_dim, generator=generator, requires_grad=True)
    values = torch.randn(1, heads, length, head_dim, generator=generator, requires_grad=True)
    gathered = [(keys[:, :, positions], values[:, :, positions]) for positions in shard.group_positions]
    before = psutil.Process().memory_info().rss
    started = time.process_time()
    out = VARIANTS[variant](q, gathered, shard, True, None, None)
    out.sum().backward()
    seconds = time.process_time() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"added_mib": (peak - before) / 2**20, "cpu_s": seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[8192, 16384])
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--head-dim", type=int, default=64)
    parser.add_argument("--worker", nargs=2, metavar=("VARIANT", "LENGTH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(_measure(args.worker[0], int(args.worker[1]), args.heads, args.head_dim)))
        return
    print(f"one rank of CP {CP}, causal, B=1, {args.heads} heads of {args.head_dim}, forward + backward, 1 thread")
    print(f"{'tokens':>7} {'variant':>7} {'MiB added':>10} {'CPU s':>7} {'memory vs plain':>16} {'time vs plain':>14}")
    for length in args.lengths:
        found = {}
        for variant in VARIANTS:
            command = [sys.executable, __file__, "--heads", str(args.heads), "--head-dim", str(args.head_dim),
                       "--worker", variant, str(length)]  # fmt: skip
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            found[variant] = json.loads(done.stdout)
        for variant, figures in found.items():
            memory = figures["added_mib"] / found["plain"]["added_mib"]
            cpu = figures["cpu_s"] / found["plain"]["cpu_s"]
            print(f"{length:>7} {variant:>7} {figures['added_mib']:>10.0f} {figures['cpu_s']:>7.2f} "
                  f"{memory:>15.2f}x {cpu:>13.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
