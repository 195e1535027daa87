"""DDP gradient compression over a real gloo group: the error each hook adds to the averaged gradient, measured
against the exact all-reduce, and a tiny model that still learns with it. (bf16 needs NCCL: refused here.)"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from pydantic import ValidationError
from torch.nn.parallel import DistributedDataParallel

from pretrain_core.train.config import TrainConfig
from pretrain_core.train.model.gpt import GPT, ModelArgs, cross_entropy
from pretrain_core.train.parallel.compression import compress_gradients

ARGS = ModelArgs(vocab_size=64, n_layer=2, n_head=2, d_model=32, max_seq_len=16)
START = 2  # PowerSGD's exact steps before it compresses


def _gradients(model: torch.nn.Module, rank: int, step: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(100 * step + rank)  # each rank its own batch
    batch = torch.randint(0, ARGS.vocab_size, (4, 17), generator=generator)
    model.zero_grad(set_to_none=True)
    cross_entropy(model(batch[:, :-1]), batch[:, 1:]).backward()
    return torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])


def _rank(rank: int, world: int, store: str, kind: str, results: str) -> None:
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=world)
    torch.manual_seed(0)
    exact = DistributedDataParallel(GPT(ARGS))
    torch.manual_seed(0)
    compressed = DistributedDataParallel(GPT(ARGS))
    compress_gradients(compressed, kind, rank=4, start_step=START)  # type: ignore[arg-type]
    errors = []
    for step in range(START + 2):  # PowerSGD all-reduces exactly until START, then approximates
        reference, approximate = _gradients(exact, rank, step), _gradients(compressed, rank, step)
        errors.append(float((approximate - reference).norm() / reference.norm()))
    optimizer = torch.optim.AdamW(compressed.parameters(), lr=3e-3)
    batch = torch.randint(0, ARGS.vocab_size, (4, 17), generator=torch.Generator().manual_seed(7 + rank))
    losses = []
    for _ in range(40):  # each rank memorises its batch: the averaged, compressed gradient must still descend
        optimizer.zero_grad(set_to_none=True)
        loss = cross_entropy(compressed(batch[:, :-1]), batch[:, 1:])
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    dist.destroy_process_group()
    Path(results, f"rank-{rank}.json").write_text(json.dumps({"errors": errors, "losses": losses}))


def _measure(kind: str, tmp_path: Path) -> dict[str, Any]:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    mp.spawn(_rank, args=(2, str(tmp_path / "store"), kind, str(tmp_path)), nprocs=2, join=True)
    return dict(json.loads((tmp_path / "rank-0.json").read_text()))


def test_fp16_compression_adds_a_rounding_sized_error_and_the_model_learns(tmp_path: Path) -> None:
    measured = _measure("fp16", tmp_path)
    print(f"fp16 all-reduce: relative gradient error {max(measured['errors']):.2e}")
    assert all(0 < error < 2e-3 for error in measured["errors"])  # fp16 keeps 11 bits: ~5e-4 per value
    assert measured["losses"][-1] < 0.8 * measured["losses"][0]


def test_powersgd_is_exact_while_warming_up_then_approximates_and_the_model_learns(tmp_path: Path) -> None:
    measured = _measure("powersgd", tmp_path)
    warming, compressing = measured["errors"][:START], measured["errors"][START:]
    print(f"PowerSGD rank 4: relative gradient error {max(compressing):.2f} once compressing")
    assert all(error < 1e-6 for error in warming)
    assert all(0.01 < error < 1.0 for error in compressing)  # low rank: a real approximation, error fed back
    assert measured["losses"][-1] < 0.8 * measured["losses"][0]


@pytest.mark.parametrize(
    ("settings", "refusal"),
    [
        ({"gradient_compression": "bf16", "backend": "gloo"}, "needs the nccl backend"),
        ({"gradient_compression": "fp16", "strategy": "fsdp"}, "is a DDP option"),
    ],
)
def test_compression_where_it_cannot_work_is_refused(settings: dict[str, str], refusal: str) -> None:
    with pytest.raises(ValidationError, match=refusal):
        TrainConfig(**settings)
