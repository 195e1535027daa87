"""Checkpoint saves under FSDP on gloo: sharded (every rank writes its own shards, synchronously or in the background)
against the consolidated save it replaced (the whole state gathered onto rank 0's CPU, one `torch.save`).

For each world size and method (a torchrun launch of its own, one process per rank, one thread each: resident
memory is a high-water mark, and memory an earlier method freed would hide what a later one needs) a model of the
preset is sharded with FSDP2, trained a step (so AdamW holds its moments), then saved `--repeats` times. Reported:
seconds training is blocked by a save (until the call returns; a background save's first, which allocates the
staging buffer the later ones reuse, is reported apart), seconds until the checkpoint is complete, rank 0's
peak resident memory above its level before the save (sampled every 2 ms), the bytes each rank writes, and the
seconds to load the checkpoint back into the sharded model. A table then extrapolates the per-rank bytes of a
save to the presets on 8 and 64 GPUs (fp32 weights + AdamW's two moments: 12 bytes per parameter).

    python benchmarks/bench_checkpoint.py --preset 350m --world-sizes 2 4 --dir /tmp/bench-ckpt
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import io
import json
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import torch
import torch.distributed as dist
from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict, get_optimizer_state_dict
from torch.distributed.fsdp import fully_shard

from pretrain_core.train.checkpoint.dcp_format import staging_buffer
from pretrain_core.train.checkpoint.store import finish_save, load_checkpoint, start_save
from pretrain_core.train.model.gpt import GPT, ModelArgs, cross_entropy
from pretrain_core.train.schedule import build_scheduler
from pretrain_core.train.sections.model import MODEL_PRESETS

METHODS = ("consolidated", "sharded", "sharded-async")
BYTES_PER_PARAMETER = 12  # fp32 weights and AdamW's exp_avg and exp_avg_sq


class PeakMemory:
    """Rank 0's resident set sampled in a thread: the peak above the level when it started."""

    def __init__(self) -> None:
        self.process = psutil.Process()
        self.base = self.peak = self.process.memory_info().rss
        self.running = True
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()

    def _sample(self) -> None:
        while self.running:
            self.peak = max(self.peak, self.process.memory_info().rss)
            time.sleep(0.002)

    def stop(self) -> float:
        self.running = False
        self.thread.join()
        return (self.peak - self.base) / 2**20


def consolidated_save(url: str, model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> None:
    """The save this project made before sharded checkpoints: gather all on rank 0's CPU, rank 0 writes it."""
    options = StateDictOptions(full_state_dict=True, cpu_offload=True)
    state = {
        "model": get_model_state_dict(model, options=options),
        "optimizer": get_optimizer_state_dict(model, optimizer, options=options),
    }
    if dist.get_rank() == 0:
        buffer = io.BytesIO()
        torch.save(state, buffer)
        Path(url).mkdir(parents=True, exist_ok=True)
        (Path(url) / "state.pt").write_bytes(buffer.getvalue())
    dist.barrier()


def consolidated_load(url: str, model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> None:
    from torch.distributed.checkpoint.state_dict import set_model_state_dict, set_optimizer_state_dict

    state = torch.load(Path(url) / "state.pt", map_location="cpu", weights_only=True)  # every rank reads it all
    set_model_state_dict(model, state["model"], options=StateDictOptions(full_state_dict=True))
    set_optimizer_state_dict(model, optimizer, state["optimizer"], options=StateDictOptions(full_state_dict=True))


def worker(args: argparse.Namespace) -> None:
    """One rank under torchrun; rank 0 prints the results as JSON."""
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    n_layer, n_head, d_model = MODEL_PRESETS[args.preset]
    model = GPT(ModelArgs(args.vocab_size, n_layer, n_head, d_model, args.seq_len))
    for block in model.blocks.values():
        fully_shard(block)
    fully_shard(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    scheduler = build_scheduler(optimizer, 1, 10, 0.1)
    batch = torch.randint(0, args.vocab_size, (1, args.seq_len + 1))
    cross_entropy(model(batch[:, :-1]), batch[:, 1:]).backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    meta = {"config": {"keep_last_checkpoints": 1000}, "model_args": model.args.to_dict()}
    background = dist.new_group(backend="gloo")
    stager = staging_buffer(torch.device("cpu"))  # kept across saves, as the trainer keeps it
    root = Path(args.dir) / f"world-{world}"
    results: dict[str, dict[str, Any]] = {}
    for method in [args.method]:
        blocked, complete, peaks = [], [], []
        for repeat in range(args.repeats):
            output = str(root / method / f"repeat-{repeat}")
            dist.barrier()
            memory = PeakMemory() if rank == 0 else None
            began = time.perf_counter()
            if method == "consolidated":
                consolidated_save(output, model, optimizer)
                blocked.append(time.perf_counter() - began)
            else:
                saving = start_save(
                    output, 1, model, optimizer, scheduler, meta, background=method == "sharded-async",
                    group=background, stager=stager,
                )  # fmt: skip
                blocked.append(time.perf_counter() - began)
                finish_save(saving)
            dist.barrier()
            complete.append(time.perf_counter() - began)
            if memory is not None:
                peaks.append(memory.stop())
        written = sum(f.stat().st_size for f in (root / method / "repeat-0").rglob("*") if f.is_file())
        saved = str(root / method / "repeat-0")
        load = _timed(lambda m=method, url=saved: _load(m, url, model, optimizer, scheduler))
        results[method] = {
            "blocked_s": statistics.median(blocked),
            "first_blocked_s": blocked[0],  # a background save's first allocates the staging buffer
            "complete_s": statistics.median(complete),
            "rank0_peak_mb": max(peaks) if peaks else 0.0,
            "bytes_written": written,
            "load_s": load,
        }
    if rank == 0:
        print("RESULT " + json.dumps({"world": world, "params": model.num_params(), "methods": results}), flush=True)
    dist.destroy_process_group()


def _load(
    method: str,
    output: str,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
) -> None:
    if method == "consolidated":
        consolidated_load(output, model, optimizer)
    else:
        load_checkpoint(str(Path(output) / "checkpoints" / "step-00000001"), model, optimizer, scheduler)


def _timed(action: Callable[[], None]) -> float:
    dist.barrier()
    began = time.perf_counter()
    action()
    dist.barrier()
    return time.perf_counter() - began


def run_world(args: argparse.Namespace, world: int) -> dict[str, Any]:
    """Every method at ``world`` ranks, each in fresh processes."""
    run: dict[str, Any] = {"world": world, "methods": {}}
    for method in METHODS:
        command = [
            sys.executable, "-m", "torch.distributed.run", f"--nproc-per-node={world}", "--standalone", __file__,
            "--worker", "--method", method, "--preset", args.preset, "--seq-len", str(args.seq_len),
            "--vocab-size", str(args.vocab_size), "--repeats", str(args.repeats), "--dir", args.dir,
        ]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        results = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
        shutil.rmtree(args.dir, ignore_errors=True)
        if not results:  # a method that runs out of memory is a finding, not the end of the benchmark
            killed = "SIGKILL" in done.stderr or "exitcode: -9" in done.stderr
            run["methods"][method] = {"failed": "killed (out of memory?)" if killed else done.stderr[-300:]}
            continue
        result = json.loads(results[-1].removeprefix("RESULT "))
        run["params"] = result["params"]
        run["methods"][method] = result["methods"][method]
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", default="small", choices=sorted(MODEL_PRESETS))
    parser.add_argument("--world-sizes", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--seq-len", type=int, default=128)
    parser.add_argument("--vocab-size", type=int, default=32000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dir", default="/tmp/bench-checkpoint", help="where the checkpoints go (removed after)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)  # a rank under torchrun
    parser.add_argument("--method", choices=METHODS, help=argparse.SUPPRESS)  # the worker's method
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    runs = []
    try:
        for world in args.world_sizes:
            runs.append(run_world(args, world))
    finally:
        shutil.rmtree(args.dir, ignore_errors=True)
    params = next((run["params"] for run in runs if "params" in run), 0)
    print(f"{args.preset} ({params / 1e6:.0f}M parameters), FSDP2 on gloo, 1 thread per rank, median of "
          f"{args.repeats} saves")  # fmt: skip
    print(f"{'ranks':>5} {'method':<14} {'blocked s':>9} {'first':>6} {'complete s':>10} {'rank-0 peak MB':>14} "
          f"{'MB written':>10} {'load s':>7}")  # fmt: skip
    for run in runs:
        for method, m in run["methods"].items():
            if "failed" in m:
                print(f"{run['world']:>5} {method:<14} failed: {m['failed']}")
                continue
            print(f"{run['world']:>5} {method:<14} {m['blocked_s']:>9.3f} {m['first_blocked_s']:>6.2f} "
                  f"{m['complete_s']:>10.3f} {m['rank0_peak_mb']:>14.0f} {m['bytes_written'] / 2**20:>10.0f} "
                  f"{m['load_s']:>7.3f}")  # fmt: skip
        gathered, sync, background = (run["methods"][m] for m in METHODS)
        if any("failed" in m for m in (gathered, sync, background)):
            continue
        print(f"      background save blocks {background['blocked_s'] / sync['blocked_s']:.1%} of a synchronous "
              f"save's time; rank 0's peak is {sync['rank0_peak_mb'] / gathered['rank0_peak_mb']:.1%} of the "
              "consolidated save's")  # fmt: skip
    print(f"\nper-rank bytes of a save (fp32 weights + AdamW moments, {BYTES_PER_PARAMETER} B/parameter)")
    print(f"{'preset':<8} {'params':>7} {'consolidated: rank 0':>21} {'sharded, 8 GPUs':>16} {'sharded, 64 GPUs':>17}")
    for preset, (n_layer, _, d_model) in MODEL_PRESETS.items():
        params = _count(n_layer, d_model)
        total = params * BYTES_PER_PARAMETER
        print(f"{preset:<8} {params / 1e6:>6.0f}M {total / 1e9:>18.1f} GB {total / 8 / 1e9:>13.2f} GB "
              f"{total / 64 / 1e9:>14.3f} GB")  # fmt: skip


def _count(n_layer: int, d_model: int, vocab_size: int = 32000) -> int:
    """Parameters of our block (4 d^2 attention, 8 d^2 MLP, two norms) and a tied embedding, without building it
    (`GPT.num_params` gives the same count for the presets small enough to build)."""
    return n_layer * (12 * d_model * d_model + 2 * d_model) + vocab_size * d_model + d_model


if __name__ == "__main__":
    main()
