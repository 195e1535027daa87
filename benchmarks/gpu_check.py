"""The GPU check: one script for the day a GPU is lent, about 5 minutes on one H100. It measures

  1. the 124m training MFU in bf16 with torch.compile (llm.c's and PaLM's counts; target >= 45 %),
  2. fp16 with the loss scaler (it must learn and keep a finite scale),
  3. a sharded checkpoint of the 124m model and AdamW state: synchronous and background saves (seconds training is
     blocked, seconds until complete) and the load,
  4. the NVML monitor the trainer logs (utilisation, power, temperature, memory),
  5. KV-cached generation throughput (greedy, one sequence),

prints them and appends them, with the card's name, to --append-to (a Markdown file; docs/gpu-checks.md in the
repo). On a CPU it runs at toy size (`--toy`), which is how the tests keep it working.

    python benchmarks/gpu_check.py --append-to docs/gpu-checks.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script: its sibling benchmark is importable

from bench_gpu_train import Shape, measure_training, report

from pretrain_core.generate.config import GenerationConfig
from pretrain_core.generate.decode import generate
from pretrain_core.train.checkpoint.store import finish_save, load_checkpoint, start_save
from pretrain_core.train.model.gpt import GPT, ModelArgs, cross_entropy
from pretrain_core.train.observe.hardware import device_metrics
from pretrain_core.train.schedule import build_scheduler
from pretrain_core.train.sections.model import MODEL_PRESETS


def checkpoint_timing(shape: Shape, device: torch.device, root: str) -> dict[str, float]:
    """Save the model and AdamW state (one step in) synchronously and in the background, then load it back."""
    n_layer, n_head, d_model = MODEL_PRESETS[shape.preset]
    model = GPT(ModelArgs(shape.vocab_size, n_layer, n_head, d_model, shape.seq_len)).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    scheduler = build_scheduler(optimizer, 1, 10, 0.1)
    batch = torch.randint(0, shape.vocab_size, (1, shape.seq_len + 1), device=device)
    cross_entropy(model(batch[:, :-1]), batch[:, 1:]).backward()
    optimizer.step()
    meta = {"config": {"keep_last_checkpoints": 10}, "model_args": model.args.to_dict()}
    figures: dict[str, float] = {}
    for name, background in (("sync", False), ("background", True)):
        began = time.perf_counter()
        saving = start_save(f"{root}/{name}", 1, model, optimizer, scheduler, meta, background=background)
        figures[f"{name}_blocked_s"] = time.perf_counter() - began
        finish_save(saving)
        figures[f"{name}_complete_s"] = time.perf_counter() - began
    began = time.perf_counter()
    load_checkpoint(f"{root}/sync/checkpoints/step-00000001", model, optimizer, scheduler)
    figures["load_s"] = time.perf_counter() - began
    return figures


def generation_throughput(shape: Shape, device: torch.device, new_tokens: int) -> float:
    n_layer, n_head, d_model = MODEL_PRESETS[shape.preset]
    model = GPT(ModelArgs(shape.vocab_size, n_layer, n_head, d_model, shape.seq_len)).to(device).eval()
    prompt = list(range(1, 1 + min(32, shape.seq_len // 4)))
    config = GenerationConfig(strategy="greedy", max_new_tokens=new_tokens)
    generate(model, prompt, config.model_copy(update={"max_new_tokens": 4}))  # warm-up
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    began = time.perf_counter()
    produced = generate(model, prompt, config)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return len(produced.ids) / (time.perf_counter() - began)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--toy", action="store_true", help="CPU-sized shapes, no compile: the script's own test")
    parser.add_argument("--append-to", metavar="FILE", help="Markdown file the figures are appended to")
    parser.add_argument("--peak-tflops", type=float, default=989.0, help="dense bf16 spec of the card (H100: 989)")
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    shape = Shape("tiny", 32, 2, 512) if args.toy else Shape()
    steps, warmup = (2, 1) if args.toy else (50, 10)
    lines: list[str] = []
    started = time.perf_counter()
    lines += report(
        measure_training(shape, "bf16" if not args.toy else "fp32", not args.toy, steps, warmup, args.peak_tflops)
    )
    fp16 = measure_training(shape, "fp16", False, steps, warmup, args.peak_tflops)
    lines += report(fp16)
    with tempfile.TemporaryDirectory(prefix="gpu-check-") as root:
        saves = checkpoint_timing(shape, device, root)
    lines.append(
        f"  checkpoint of {shape.preset} + AdamW: synchronous {saves['sync_blocked_s']:.2f} s blocked; background "
        f"{saves['background_blocked_s']:.2f} s blocked, complete in {saves['background_complete_s']:.2f} s; "
        f"load {saves['load_s']:.2f} s"
    )
    monitor: dict[str, Any] = device_metrics(device)
    lines.append("  NVML: " + (", ".join(f"{k} {v:.0f}" for k, v in monitor.items()) or "no GPU figures"))
    lines.append(f"  generation: {generation_throughput(shape, device, 16 if args.toy else 256):,.0f} tokens/s "
                 "(greedy, KV cache, one sequence)")  # fmt: skip
    lines.append(f"  the check took {time.perf_counter() - started:.0f} s")
    text = "\n".join(lines)
    print(text)
    if args.append_to:
        stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
        command = "python benchmarks/gpu_check.py" + (" --toy" if args.toy else "")
        with open(args.append_to, "a", encoding="utf-8") as out:
            out.write(f"\n## {stamp}: {torch.cuda.get_device_name(device) if device.type == 'cuda' else 'CPU'}\n\n"
                      f"`{command}` (torch {torch.__version__})\n\n```\n{text}\n```\n")  # fmt: skip


if __name__ == "__main__":
    main()
