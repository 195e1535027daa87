"""Training on a CUDA GPU: the same loop, in bf16 and in fp16 with loss scaling, resumed exactly. Skipped, with its
reason printed, on machines without one (CI's); `benchmarks/bench_gpu_train.py` is the GPU check that also times."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from pretrain_core.train.config import TrainConfig
from pretrain_core.train.trainer import train

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs a CUDA GPU (torch.cuda.is_available() is False on this machine)"
)


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
def test_a_run_on_the_gpu_learns_and_resumes_bitwise(
    tiny_config: Callable[..., TrainConfig], tmp_path: Path, precision: str
) -> None:
    torch.cuda.reset_peak_memory_stats()
    full = train(tiny_config(output_url=str(tmp_path / "full"), precision=precision))
    assert torch.cuda.max_memory_allocated() > 0  # the model and its batches lived on the GPU
    assert full.status == "completed"
    assert full.summary["final_validation_loss"] < full.summary["initial_validation_loss"]
    stop = threading.Event()
    config = tiny_config(output_url=str(tmp_path / "resumed"), precision=precision, checkpoint_every=2)
    first = train(config, on_checkpoint=[lambda url, step: stop.set()], stop=stop)
    second = train(config)
    assert first.status == "stopped" and second.status == "completed"
    assert {**first.losses, **second.losses} == full.losses
