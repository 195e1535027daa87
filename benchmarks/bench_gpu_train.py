"""Training throughput and MFU on an accelerator: our GPT at GPT-2 small's size in bf16 with fused AdamW and
torch.compile, the setting a lent GPU is checked with (target: >= 45 % MFU on an H100-class GPU).

MFU counts PaLM's training FLOPs per token (6 per non-embedding weight plus attention's 12 x layers x sequence x
width) against two ceilings: the device's dense bf16 spec (`--peak-tflops`, H100/H200 SXM: 989) and the matmul
peak measured here. Token ids are random: the step cost does not depend on the text. It also runs on CPU (small
shapes, no compile) so the script itself is tested everywhere.

    python benchmarks/bench_gpu_train.py                       # on a GPU: 124m, seq 1024, batch 16, compile
    python benchmarks/bench_gpu_train.py --preset tiny --seq-len 128 --batch-size 4 --steps 3 --warmup 1 --no-compile
"""

from __future__ import annotations

import argparse
import time

import torch

from pretrain_core.train.config import MODEL_PRESETS
from pretrain_core.train.hardware import flops_per_token, measure_peak_flops
from pretrain_core.train.model import GPT, ModelArgs, cross_entropy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", default="124m", choices=sorted(MODEL_PRESETS))
    parser.add_argument("--seq-len", type=int, default=1024)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--vocab-size", type=int, default=50304)  # GPT-2's, padded to a multiple of 64
    parser.add_argument("--steps", type=int, default=50, help="timed steps")
    parser.add_argument("--warmup", type=int, default=10, help="untimed steps first (compilation happens here)")
    parser.add_argument("--precision", choices=["bf16", "fp32"], default="bf16")
    parser.add_argument("--compile", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--peak-tflops", type=float, default=989.0, help="the device's dense peak in --precision")
    args = parser.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.manual_seed(0)
    n_layer, n_head, d_model = MODEL_PRESETS[args.preset]
    model = GPT(ModelArgs(args.vocab_size, n_layer, n_head, d_model, args.seq_len)).to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=device.type == "cuda")
    if args.compile:
        model.forward = torch.compile(model.forward)  # type: ignore[method-assign]
    dtype = torch.bfloat16 if args.precision == "bf16" else torch.float32
    batch = torch.randint(0, args.vocab_size, (args.batch_size, args.seq_len + 1), device=device)

    def step() -> None:
        with torch.autocast(device.type, dtype=dtype, enabled=dtype != torch.float32):
            loss = cross_entropy(model(batch[:, :-1]), batch[:, 1:])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    compile_started = time.perf_counter()
    for _ in range(args.warmup):
        step()
    _sync(device)
    warmup_s = time.perf_counter() - compile_started
    started = time.perf_counter()
    for _ in range(args.steps):
        step()
    _sync(device)
    seconds = time.perf_counter() - started

    tokens_per_s = args.steps * args.batch_size * args.seq_len / seconds
    non_embedding = model.num_params() - model.embed.weight.numel()
    achieved = tokens_per_s * flops_per_token(non_embedding, n_layer, args.seq_len, d_model)
    measured_peak = measure_peak_flops(device, dtype)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else f"CPU, {torch.get_num_threads()} threads"
    shape = f"{args.preset} ({model.num_params() / 1e6:.0f}M), seq {args.seq_len} x batch {args.batch_size}"
    setup = f"{args.precision}, compile {'on' if args.compile else 'off'}, fused AdamW {device.type == 'cuda'}"
    print(f"{name}: {shape}, {setup}")
    print(f"  warm-up {args.warmup} steps {warmup_s:.1f} s; {args.steps} timed steps {seconds:.2f} s")
    print(f"  {tokens_per_s:,.0f} tokens/s, {achieved / 1e12:.3g} TFLOP/s of model FLOPs")
    spec = achieved / (args.peak_tflops * 1e12)
    print(f"  MFU {spec:.1%} of the {args.peak_tflops:g} TFLOP/s spec; {achieved / measured_peak:.1%} of the")
    print(f"  {measured_peak / 1e12:.3g} TFLOP/s matmul peak measured here")
    if device.type == "cuda":
        print(f"  peak memory {torch.cuda.max_memory_allocated(device) / 2**30:.1f} GiB")


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


if __name__ == "__main__":
    main()
