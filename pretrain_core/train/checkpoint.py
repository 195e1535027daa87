"""Checkpoints on any fsspec URL: `<output_url>/checkpoints/step-00000100/`, complete once `manifest.json` exists.

Every file is written atomically and the manifest last, so a crash mid-save leaves a directory that
`latest_checkpoint` ignores. State dicts are gathered in full ("consolidated") so a checkpoint written by
N ranks under DDP or FSDP loads into any world size, and evaluation needs only `model.pt` and `meta.json`.
"""

from __future__ import annotations

import io
import random
import re
from typing import Any

import numpy as np
import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.checkpoint.state_dict import (
    StateDictOptions,
    get_model_state_dict,
    get_optimizer_state_dict,
    set_model_state_dict,
    set_optimizer_state_dict,
)

from pretrain_core import storage
from pretrain_core.train.model import GPT, ModelArgs

MANIFEST = "manifest.json"
_STEP_DIR = re.compile(r"step-(\d{8})$")
_GATHER = StateDictOptions(full_state_dict=True, cpu_offload=True)
_SCATTER = StateDictOptions(full_state_dict=True)


def checkpoints_root(output_url: str) -> str:
    return storage.join(output_url, "checkpoints")


def checkpoint_url(output_url: str, step: int) -> str:
    return storage.join(checkpoints_root(output_url), f"step-{step:08d}")


def _step_dirs(output_url: str) -> dict[int, str]:
    """Every step directory, complete or not, by step."""
    root = checkpoints_root(output_url)
    fs, path = storage.filesystem(root)
    fs.invalidate_cache(path)  # object stores cache listings; another rank or process may have written since
    if not fs.exists(path):
        return {}
    found = {}
    for entry in fs.ls(path, detail=False):
        match = _STEP_DIR.search(entry.rstrip("/"))
        if match:
            found[int(match.group(1))] = storage.join(root, match.group(0))
    return found


def completed_checkpoints(output_url: str) -> list[tuple[int, str]]:
    """(step, url) of checkpoints whose manifest was written, oldest first."""
    return [(step, url) for step, url in sorted(_step_dirs(output_url).items()) if storage.exists(_manifest(url))]


def latest_checkpoint(output_url: str) -> str | None:
    done = completed_checkpoints(output_url)
    return done[-1][1] if done else None


def _manifest(url: str) -> str:
    return storage.join(url, MANIFEST)


def _rank() -> int:
    return dist.get_rank() if dist.is_initialized() else 0


def _world_size() -> int:
    return dist.get_world_size() if dist.is_initialized() else 1


def _barrier() -> None:
    if dist.is_initialized():
        dist.barrier()


def _save_torch(url: str, obj: Any) -> None:
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    storage.write_bytes(url, buffer.getvalue())


def _load_torch(url: str) -> Any:
    return torch.load(io.BytesIO(storage.read_bytes(url)), map_location="cpu", weights_only=True)


def rng_state() -> dict[str, Any]:
    """Every generator this process draws from; numpy's key becomes a tensor so `weights_only` loading works."""
    np_state = np.random.get_state(legacy=False)
    np_state["state"]["key"] = torch.from_numpy(np_state["state"]["key"].astype(np.int64))
    return {
        "python": random.getstate(),
        "numpy": np_state,
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
    }


def set_rng_state(state: dict[str, Any]) -> None:
    random.setstate((state["python"][0], tuple(state["python"][1]), state["python"][2]))
    np_state = dict(state["numpy"])
    np_state["state"] = {**np_state["state"], "key": np_state["state"]["key"].numpy().astype(np.uint32)}
    np.random.set_state(np_state)
    torch.set_rng_state(state["torch"])
    if state["cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def save_checkpoint(
    output_url: str,
    step: int,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
    meta: dict[str, Any],
    keep_last: int,
) -> str:
    """Collective: every rank calls it. Rank 0 writes the consolidated state, each rank its RNG state."""
    url = checkpoint_url(output_url, step)
    model_state = get_model_state_dict(model, options=_GATHER)
    optimizer_state = get_optimizer_state_dict(model, optimizer, options=_GATHER)
    rank, world_size = _rank(), _world_size()
    if rank == 0:
        _save_torch(storage.join(url, "model.pt"), model_state)
        _save_torch(
            storage.join(url, "optimizer.pt"), {"optimizer": optimizer_state, "scheduler": scheduler.state_dict()}
        )
        storage.write_json(storage.join(url, "meta.json"), {**meta, "step": step, "world_size": world_size})
    _save_torch(storage.join(url, f"rng-rank-{rank:05d}.pt"), rng_state())
    _barrier()
    if rank == 0:
        files = ["model.pt", "optimizer.pt", "meta.json"] + [f"rng-rank-{r:05d}.pt" for r in range(world_size)]
        storage.write_json(_manifest(url), {"step": step, "files": files})
        prune_checkpoints(output_url, keep_last)
    _barrier()
    return url


def prune_checkpoints(output_url: str, keep_last: int) -> None:
    """Keep the newest ``keep_last`` complete checkpoints; drop older ones and leftovers of interrupted saves."""
    done = completed_checkpoints(output_url)
    if not done:
        return
    keep = {step for step, _ in done[-keep_last:]}
    newest = done[-1][0]
    for step, url in _step_dirs(output_url).items():
        if step not in keep and step < newest:
            storage.remove(url)


def read_meta(url: str) -> dict[str, Any]:
    meta: dict[str, Any] = storage.read_json(storage.join(url, "meta.json"))
    return meta


def load_checkpoint(
    url: str,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
) -> dict[str, Any]:
    """Collective: restore model, optimizer, scheduler and this rank's RNG; return the checkpoint's meta.

    A rank with no RNG file of its own (the world grew) takes rank 0's.
    """
    set_model_state_dict(model, _load_torch(storage.join(url, "model.pt")), options=_SCATTER)
    saved = _load_torch(storage.join(url, "optimizer.pt"))
    set_optimizer_state_dict(model, optimizer, saved["optimizer"], options=_SCATTER)
    scheduler.load_state_dict(saved["scheduler"])
    rng_url = storage.join(url, f"rng-rank-{_rank():05d}.pt")
    set_rng_state(_load_torch(rng_url if storage.exists(rng_url) else storage.join(url, "rng-rank-00000.pt")))
    return read_meta(url)


def load_model(url: str, device: torch.device | str = "cpu") -> tuple[GPT, dict[str, Any]]:
    """The trained network alone (for evaluation and sampling), rebuilt from the checkpoint's model args."""
    meta = read_meta(url)
    model = GPT(ModelArgs(**meta["model_args"]))
    model.load_state_dict(_load_torch(storage.join(url, "model.pt")))
    return model.to(device).eval(), meta
