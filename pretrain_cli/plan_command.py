"""`pretrain plan`: which parallel layouts fit a model on a number of GPUs, before anyone books them."""

from __future__ import annotations

import argparse
from typing import Any

from pretrain_core.train.flat_keys import new_key
from pretrain_core.train.parallel.planner import (
    GIB,
    MAX_GPUS,
    Hardware,
    Plan,
    Workload,
    fewest_gpus,
    largest_preset_that_fits,
    plan,
    relative_step_times,
    settings_of,
    smallest_fit,
)
from pretrain_core.train.precision import PRECISIONS
from pretrain_core.train.sections.model import MODEL_PRESETS


def add_plan_command(commands: Any) -> None:
    planner = commands.add_parser(
        "plan",
        help="list the parallel layouts (pipeline x data x context x tensor) that fit a model on N GPUs",
        description="For a model (a preset or --n-layer/--n-head/--d-model), a sequence length, a global batch and "
        "a GPU count with its memory, print every layout the trainer can run that fits: its degrees, data-parallel "
        "strategy (ddp replicates the weights and optimizer state, fsdp shards them), pipeline schedule, "
        "micro-batch and accumulation, activation checkpointing, estimated memory per GPU (weights, gradients, "
        "AdamW state, activations; the peak is what must fit, with 10% headroom) and step time relative to the "
        "fastest; under each row, the --set line that runs it with `pretrain train`. When nothing fits, it says "
        "how many such GPUs would and the largest preset these GPUs hold. Memory follows this trainer's measured "
        "constants (docs/training.md has the check against measured peaks); step times are nominal and only rank "
        "the layouts.",
    )
    planner.add_argument("--model", choices=sorted(MODEL_PRESETS), default="124m", help="size preset (default 124m)")
    planner.add_argument("--n-layer", type=int, help="blocks (overrides the preset)")
    planner.add_argument("--n-head", type=int, help="attention heads (overrides the preset)")
    planner.add_argument("--d-model", type=int, help="width (overrides the preset)")
    planner.add_argument("--vocab-size", type=int, default=32000, help="tokenizer pieces (default 32000)")
    planner.add_argument("--seq-len", type=int, default=2048, help="tokens per sequence (default 2048)")
    planner.add_argument("--global-batch", type=int, default=256, help="sequences per optimizer step (default 256)")
    planner.add_argument("--gpus", type=int, default=8, help="GPUs in the job (default 8)")
    planner.add_argument("--gpu-memory-gib", type=float, default=80.0, help="memory per GPU (default 80, an H100)")
    planner.add_argument("--precision", choices=PRECISIONS, default="bf16", help="training precision (default bf16)")
    planner.add_argument("--top", type=int, default=15, help="layouts to print, fastest first (default 15)")


def _row(found: Plan, relative: float) -> list[str]:
    candidate, memory = found.candidate, found.memory
    layout = candidate.layout
    return [
        f"{layout.pp}x{layout.dp}x{layout.cp}x{layout.tp}",
        candidate.strategy,
        f"{candidate.schedule}/{candidate.microbatches}" if layout.pp > 1 else "-",
        f"{candidate.micro_batch_size}x{candidate.grad_accum_steps}",
        "yes" if candidate.activation_checkpointing else "no",
        *(f"{value / GIB:.1f}" for value in (memory.parameters, memory.gradients, memory.optimizer)),
        f"{memory.activations / GIB:.1f}",
        f"{memory.peak / GIB:.1f}",
        f"{relative:.2f}",
    ]


HEADER = ["pp x dp x cp x tp", "strategy", "schedule/microbatches", "micro x accum", "act. ckpt", "weights",
          "grads", "adamw", "activations", "peak GiB", "rel. time"]  # fmt: skip


def _gpus(count: int) -> str:
    return f"{count} GPU" if count == 1 else f"{count} GPUs"


def model_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The `train.*` settings of the planned model and batch shape: the preset, the dimensions given over it."""
    settings: dict[str, Any] = {"model": args.model}
    settings |= {name: getattr(args, name) for name in ("n_layer", "n_head", "d_model") if getattr(args, name)}
    return settings | {"seq_len": args.seq_len, "precision": args.precision, "gpu_memory_gib": args.gpu_memory_gib}


def set_line(settings: dict[str, Any]) -> str:
    """`--set train.KEY=VALUE ...` for every setting given: a config file may set any of them otherwise."""
    line = " ".join(f"--set train.{new_key(key)}={str(value).lower() if isinstance(value, bool) else value}"
                    for key, value in settings.items())  # fmt: skip
    return line + (f" --set train.{new_key('rdzv_endpoint')}=HOST:PORT" if settings.get("nnodes", 1) > 1 else "")


def _what_would_fit(workload: Workload, args: argparse.Namespace, hardware: Hardware) -> str:
    need = smallest_fit(workload, args.gpus, hardware)
    lines = [
        f"no layout fits: the least hungry (one sequence per micro-batch, activation checkpointing, every way of "
        f"splitting the model over {_gpus(args.gpus)}) needs about {need:.1f} GiB per GPU"
    ]
    more = fewest_gpus(workload, hardware, more_than=args.gpus)
    if more is not None:
        lines.append(f"it fits on {more} GPUs of {args.gpu_memory_gib:g} GiB: --gpus {more}")
    else:
        lines.append(f"no count of {args.gpu_memory_gib:g} GiB GPUs up to {MAX_GPUS} holds it: cut seq_len or model")
    preset = largest_preset_that_fits(workload, args.gpus, hardware)
    if preset is not None:
        lines.append(f"the largest preset {_gpus(args.gpus)} of {args.gpu_memory_gib:g} GiB hold: --model {preset}")
    return "\n".join(lines)


def run_plan(args: argparse.Namespace) -> int:
    n_layer, n_head, d_model = MODEL_PRESETS[args.model]
    workload = Workload(
        n_layer=args.n_layer or n_layer, n_head=args.n_head or n_head, d_model=args.d_model or d_model,
        vocab_size=args.vocab_size, seq_len=args.seq_len, global_batch=args.global_batch, precision=args.precision,
    )  # fmt: skip
    hardware = Hardware(gpu_memory_gib=args.gpu_memory_gib)
    plans = plan(workload, args.gpus, hardware)
    params = workload.params() / 1e6
    print(
        f"{params:,.0f}M parameters ({workload.n_layer} layers, {workload.n_head} heads, width {workload.d_model}), "
        f"{workload.global_batch} x {workload.seq_len} tokens per step, {_gpus(args.gpus)} of "
        f"{args.gpu_memory_gib:g} GiB, {workload.precision}"
    )
    if not plans:
        print(_what_would_fit(workload, args, hardware))
        return 1
    shown = plans[: args.top]
    rows = [_row(found, relative) for found, relative in zip(shown, relative_step_times(plans), strict=False)]
    widths = [max(len(line[col]) for line in [HEADER, *rows]) for col in range(len(HEADER))]
    print("  ".join(cell.rjust(width) for cell, width in zip(HEADER, widths, strict=True)))
    shape = model_settings(args)
    for found, row in zip(shown, rows, strict=True):
        print("  ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True)))
        print("    " + set_line(shape | settings_of(found.candidate, hardware.gpus_per_node)))
    if len(plans) > args.top:
        print(f"... {len(plans) - args.top} more (--top)")
    return 0
