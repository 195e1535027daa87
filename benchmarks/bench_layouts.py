"""Training throughput of each parallel layout on 2 ranks over gloo, against DDP on the same 2 ranks: what pipeline,
context and tensor parallelism cost where the model would fit one rank anyway (on a CPU they buy nothing; they
exist for models and sequences that do not fit a GPU, and this measures their overhead).

Each layout is a torchrun launch of its own (2 processes, one thread each). A rank builds the model from the
preset, splits and wraps it as the trainer does (`parallel_model.parallelize`), and times
`train_step` on random token ids (the step's cost does not depend on the text) after one warm-up step. Every layout
consumes the same global batch per step, so tokens/s compare directly; per core divides by the 2 processes.

    python benchmarks/bench_layouts.py --preset tiny --seq-len 256 --micro-batch 8 --steps 8
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import torch

from pretrain_core.train.config import TrainConfig
from pretrain_core.train.parallel.distributed import cleanup_distributed, init_distributed
from pretrain_core.train.parallel.parallelize import parallelize
from pretrain_core.train.step import Update, train_step

VOCAB = 8000
RANKS = 2
LAYOUTS: dict[str, dict[str, Any]] = {
    "ddp": {},
    "fsdp": {"strategy": "fsdp"},
    "pp-1f1b": {"pipeline_parallel": 2},
    "pp-gpipe": {"pipeline_parallel": 2, "pipeline_schedule": "gpipe"},
    "pp-interleaved": {"pipeline_parallel": 2, "pipeline_schedule": "interleaved-1f1b"},
    "cp": {"context_parallel": 2},
    "tp": {"tensor_parallel": 2},
}


def _config(args: argparse.Namespace, layout: str) -> TrainConfig:
    """The layout's config; one data-parallel replica (pp, cp, tp) reads the batch DDP's two replicas split."""
    overrides = LAYOUTS[layout]
    replicas = RANKS if not ({"pipeline_parallel", "context_parallel", "tensor_parallel"} & set(overrides)) else 1
    return TrainConfig(
        model=args.preset, seq_len=args.seq_len, micro_batch_size=args.micro_batch * RANKS // replicas,
        nproc_per_node=RANKS, backend="gloo", num_threads=1, warmup_steps=0, max_steps=args.steps + 1,
        **overrides,
    )  # fmt: skip


def _worker(args: argparse.Namespace) -> None:
    config = _config(args, args.worker)
    torch.set_num_threads(1)
    env = init_distributed("gloo", layout=config.layout)
    torch.manual_seed(0)
    parallel = parallelize(config.model.build(VOCAB, config.data.seq_len), config, env)
    optimizer, scheduler = config.optimizer.build(parallel.module, config.peak_lr(), config.max_steps)
    update = Update(optimizer, scheduler, grad_clip=1.0)
    generator = torch.Generator().manual_seed(env.dp_rank)

    def batches() -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        while True:
            ids = torch.randint(0, VOCAB, (config.data.micro_batch_size, config.data.seq_len + 1), generator=generator)
            yield ids[:, :-1], ids[:, 1:]

    stream = batches()
    seconds = []
    for _ in range(config.max_steps):
        started = time.perf_counter()
        train_step(parallel, update, stream, 1)
        seconds.append(time.perf_counter() - started)
    if env.is_main:
        tokens = config.tokens_per_step
        print(json.dumps({"layout": args.worker, "tokens_per_step": tokens, "step_s": statistics.median(seconds[1:])}))
    cleanup_distributed()


def _launch(args: argparse.Namespace, layout: str) -> dict[str, Any]:
    command = [
        sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={RANKS}", __file__,
        "--worker", layout, "--preset", args.preset, "--seq-len", str(args.seq_len),
        "--micro-batch", str(args.micro_batch), "--steps", str(args.steps),
    ]  # fmt: skip
    done = subprocess.run(
        command, capture_output=True, text=True, check=False, env={**os.environ, "OMP_NUM_THREADS": "1"}
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode or not lines:
        raise RuntimeError(f"{layout} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="tiny")
    parser.add_argument("--seq-len", type=int, default=256)
    parser.add_argument("--micro-batch", type=int, default=8, help="sequences per DDP rank per step")
    parser.add_argument("--steps", type=int, default=8, help="timed steps (after one warm-up)")
    parser.add_argument("--layouts", nargs="+", default=list(LAYOUTS), choices=list(LAYOUTS))
    parser.add_argument("--worker", choices=list(LAYOUTS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        _worker(args)
        return
    results = {layout: _launch(args, layout) for layout in ["ddp", *[x for x in args.layouts if x != "ddp"]]}
    baseline = results["ddp"]["tokens_per_step"] / results["ddp"]["step_s"]
    print(f"preset {args.preset}, {RANKS} gloo ranks x 1 thread, {results['ddp']['tokens_per_step']} tokens per step")
    print(f"{'layout':<16}{'step s':>9}{'tokens/s':>11}{'per core':>11}{'vs ddp':>9}")
    for layout, result in results.items():
        rate = result["tokens_per_step"] / result["step_s"]
        print(f"{layout:<16}{result['step_s']:>9.3f}{rate:>11.0f}{rate / RANKS:>11.0f}{rate / baseline:>9.2f}")


if __name__ == "__main__":
    main()
