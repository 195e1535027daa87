"""Training throughput and MFU on an accelerator: our GPT at GPT-2 small's size in bf16 with fused AdamW and
torch.compile, the setting a lent GPU is checked with (target: >= 45 % MFU on an H100-class GPU); fp16 runs with
the loss scaler, as training does.

MFU is counted two ways against two ceilings. The counts: llm.c's and nanoGPT's (6 FLOPs per weight, the output
projection's matmul included though its weight is the embedding's, plus attention's 12 x layers x sequence x
width), which the trainer reports; and PaLM's (non-embedding weights only). The ceilings: the device's dense spec
(`--peak-tflops`, H100/H200 SXM bf16: 989) and the matmul peak measured here. Token ids are random: the step cost
does not depend on the text. It also runs on CPU (small shapes, no compile) so the script is tested everywhere.

    python benchmarks/bench_gpu_train.py                       # on a GPU: 124m, seq 1024, batch 16, compile
    python benchmarks/bench_gpu_train.py --preset tiny --seq-len 128 --batch-size 4 --steps 3 --warmup 1 --no-compile
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from typing import Any

import torch

from pretrain_core.train.model.gpt import GPT, ModelArgs, cross_entropy
from pretrain_core.train.observe.flops import flops_per_token
from pretrain_core.train.observe.hardware import measure_peak_flops
from pretrain_core.train.sections.model import MODEL_PRESETS

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


@dataclass(frozen=True)
class Shape:
    preset: str = "124m"
    seq_len: int = 1024
    batch_size: int = 16
    vocab_size: int = 50304  # GPT-2's, padded to a multiple of 64


def measure_training(
    shape: Shape, precision: str, compile_model: bool, steps: int, warmup: int, peak_tflops: float
) -> dict[str, Any]:
    """Time ``steps`` training steps after ``warmup`` (compilation happens there) and count MFU both ways."""
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.manual_seed(0)
    n_layer, n_head, d_model = MODEL_PRESETS[shape.preset]
    model = GPT(ModelArgs(shape.vocab_size, n_layer, n_head, d_model, shape.seq_len)).to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=device.type == "cuda")
    if compile_model:
        model.forward = torch.compile(model.forward)  # type: ignore[method-assign]
    dtype = DTYPES[precision]
    scaler = torch.amp.GradScaler(device.type) if precision == "fp16" else None
    batch = torch.randint(0, shape.vocab_size, (shape.batch_size, shape.seq_len + 1), device=device)
    losses: list[float] = []

    def step() -> None:
        with torch.autocast(device.type, dtype=dtype, enabled=dtype != torch.float32):
            loss = cross_entropy(model(batch[:, :-1]), batch[:, 1:])
        (scaler.scale(loss) if scaler is not None else loss).backward()
        if scaler is not None:
            scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        if scaler is not None:
            scaler.step(optimizer)
            scaler.update()
        else:
            optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.detach())  # read after timing: no sync inside the loop

    compile_started = time.perf_counter()
    for _ in range(warmup):
        step()
    _sync(device)
    warmup_s = time.perf_counter() - compile_started
    started = time.perf_counter()
    for _ in range(steps):
        step()
    _sync(device)
    seconds = time.perf_counter() - started
    tokens_per_s = steps * shape.batch_size * shape.seq_len / seconds
    non_embedding = model.non_embedding_params()
    output = shape.vocab_size * d_model
    measured_peak = measure_peak_flops(
        device, dtype if dtype != torch.float16 or device.type == "cuda" else torch.float32
    )
    achieved = {
        "llm.c": tokens_per_s * flops_per_token(non_embedding, n_layer, shape.seq_len, d_model, output),
        "PaLM": tokens_per_s * flops_per_token(non_embedding, n_layer, shape.seq_len, d_model),
    }
    return {
        "device": torch.cuda.get_device_name(device)
        if device.type == "cuda"
        else f"CPU, {torch.get_num_threads()} threads",
        "setup": f"{shape.preset} ({model.num_params() / 1e6:.0f}M), seq {shape.seq_len} x batch {shape.batch_size}, "
        f"{precision}, compile {'on' if compile_model else 'off'}, fused AdamW {device.type == 'cuda'}",
        "warmup_s": warmup_s,
        "seconds": seconds,
        "steps": steps,
        "tokens_per_s": tokens_per_s,
        "mfu_spec": {count: flops / (peak_tflops * 1e12) for count, flops in achieved.items()},
        "mfu_measured": {count: flops / measured_peak for count, flops in achieved.items()},
        "measured_peak_tflops": measured_peak / 1e12,
        "peak_tflops": peak_tflops,
        "loss_first_last": (float(losses[0]), float(losses[-1])),
        "loss_scale": scaler.get_scale() if scaler is not None else None,
        "peak_memory_gib": torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else None,
    }


def report(result: dict[str, Any]) -> list[str]:
    lines = [
        f"{result['device']}: {result['setup']}",
        f"  warm-up {result['warmup_s']:.1f} s; {result['steps']} timed steps {result['seconds']:.2f} s",
        f"  {result['tokens_per_s']:,.0f} tokens/s",
    ]
    for count in ("llm.c", "PaLM"):
        lines.append(
            f"  MFU ({count} count) {result['mfu_spec'][count]:.1%} of the {result['peak_tflops']:g} TFLOP/s spec; "
            f"{result['mfu_measured'][count]:.1%} of the {result['measured_peak_tflops']:.3g} TFLOP/s matmul peak "
            "measured here"
        )
    if result["loss_scale"] is not None:
        lines.append(f"  loss scale {result['loss_scale']:g}; loss {result['loss_first_last'][0]:.3f} -> "
                     f"{result['loss_first_last'][1]:.3f}")  # fmt: skip
    if result["peak_memory_gib"] is not None:
        lines.append(f"  peak memory {result['peak_memory_gib']:.1f} GiB")
    return lines


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", default="124m", choices=sorted(MODEL_PRESETS))
    parser.add_argument("--seq-len", type=int, default=1024)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--vocab-size", type=int, default=50304)
    parser.add_argument("--steps", type=int, default=50, help="timed steps")
    parser.add_argument("--warmup", type=int, default=10, help="untimed steps first (compilation happens here)")
    parser.add_argument("--precision", choices=sorted(DTYPES), default="bf16")
    parser.add_argument("--compile", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--peak-tflops", type=float, default=989.0, help="the device's dense peak in --precision")
    args = parser.parse_args()
    shape = Shape(args.preset, args.seq_len, args.batch_size, args.vocab_size)
    result = measure_training(shape, args.precision, args.compile, args.steps, args.warmup, args.peak_tflops)
    print("\n".join(report(result)))


if __name__ == "__main__":
    main()
