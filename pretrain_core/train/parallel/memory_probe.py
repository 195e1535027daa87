"""Measure the peak tensor memory of a training step, on any device, with torch's MemTracker (it follows every
tensor's storage through a dispatch mode, so it works on a CPU, where no allocator keeps statistics): what the
planner's estimates are checked against."""

from __future__ import annotations

import torch
from torch.distributed._tools.mem_tracker import MemTracker

from pretrain_core.train.model.gpt import GPT, ModelArgs, cross_entropy
from pretrain_core.train.numerics import autocast
from pretrain_core.train.parallel.planner import Workload


def measure_peak_memory(workload: Workload, micro_batch_size: int, activation_checkpointing: bool) -> int:
    """Peak bytes of one step of a single process (AdamW, the step after the first, when the optimizer's state
    exists): weights, optimizer state, gradients, activations and temporaries."""
    torch.manual_seed(0)
    args = ModelArgs(
        vocab_size=workload.vocab_size, n_layer=workload.n_layer, n_head=workload.n_head, d_model=workload.d_model,
        max_seq_len=workload.seq_len,
    )  # fmt: skip
    model = GPT(args)
    model.activation_checkpointing = activation_checkpointing
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    batch = torch.randint(0, workload.vocab_size, (micro_batch_size, workload.seq_len + 1))
    device = torch.device("cpu")

    def step() -> None:
        with autocast(workload.precision, device):
            loss = cross_entropy(model(batch[:, :-1]), batch[:, 1:])
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    step()
    tracker = MemTracker()
    tracker.track_external(model, optimizer)
    with tracker:
        step()
    return int(tracker.get_tracker_snapshot("peak")[device]["Total"])
