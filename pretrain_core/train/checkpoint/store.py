"""Checkpoints on any fsspec URL: `<output_url>/checkpoints/step-00000100/`, complete once `manifest.json` exists.

Every rank writes its own shards of the model and optimizer state with torch.distributed.checkpoint (DCP, under
`state/`); nothing is gathered onto one rank, and a checkpoint written at one world size and layout (DDP, FSDP, tensor
parallel) resumes at any other, DCP resharding on load. What is not a tensor (optimizer hyperparameters, schedule,
each rank's RNG, the run's meta) is JSON beside it: nothing here is unpickled. A save can run in the background
(`start_save` now, `finish_save` once it is done); the manifest is written last, so a crash mid-save leaves a
directory `latest_checkpoint` ignores. Evaluation and export read the whole model without a process group
(`load_model`). Checkpoints of the earlier consolidated format (`model.pt`, gathered on rank 0) still load.
"""

from __future__ import annotations

import base64
import io
import random
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.checkpoint.staging import DefaultStager
from torch.distributed.checkpoint.state_dict import (
    StateDictOptions,
    get_model_state_dict,
    get_optimizer_state_dict,
    set_model_state_dict,
    set_optimizer_state_dict,
)

from pretrain_core import storage
from pretrain_core.train.checkpoint.catalog import TOKENIZER_FILE, checkpoint_url, manifest_url, read_meta
from pretrain_core.train.checkpoint.dcp_format import INDEX, load_shards, save_shards, saved_tensors
from pretrain_core.train.checkpoint.records import prune_as_configured
from pretrain_core.train.model.gpt import GPT, ModelArgs
from pretrain_core.train.parallel.distributed import reshard

STATE_DIR = "state"  # the DCP shards and their JSON index
TRAIN_STATE = "train_state.json"  # optimizer parameter groups and the schedule
FORMAT = "sharded-dcp"
TIED_EMBEDDING, TIED_HEAD = "embed.weight", "lm_head.weight"  # one matrix, two names
_GATHER = StateDictOptions(full_state_dict=True, cpu_offload=True)
_SCATTER = StateDictOptions(full_state_dict=True)


def _rng_file(rank: int) -> str:
    return f"rng-rank-{rank:05d}.json"


def _rank() -> int:
    return dist.get_rank() if dist.is_initialized() else 0


def _world_size() -> int:
    return dist.get_world_size() if dist.is_initialized() else 1


def _load_torch(url: str) -> Any:
    """A file of the consolidated format: torch's weights-only loader (tensors and plain containers only)."""
    return torch.load(io.BytesIO(storage.read_bytes(url)), map_location="cpu", weights_only=True)


def _bytes_of(state: torch.Tensor | str) -> torch.Tensor:
    """A byte tensor of an RNG state, from JSON (base64) or from the consolidated format (a tensor)."""
    if isinstance(state, torch.Tensor):
        return state
    return torch.frombuffer(bytearray(base64.b64decode(state)), dtype=torch.uint8)


def rng_state() -> dict[str, Any]:
    """Every generator this process draws from, as JSON."""
    np_state = np.random.get_state(legacy=False)
    np_state["state"]["key"] = np_state["state"]["key"].tolist()
    return {
        "python": random.getstate(),
        "numpy": np_state,
        "torch": base64.b64encode(torch.get_rng_state().numpy().tobytes()).decode(),
        "cuda": [base64.b64encode(s.numpy().tobytes()).decode() for s in torch.cuda.get_rng_state_all()]
        if torch.cuda.is_available()
        else [],
    }


def set_rng_state(state: dict[str, Any]) -> None:
    random.setstate((state["python"][0], tuple(state["python"][1]), state["python"][2]))
    np_state = dict(state["numpy"])
    key = np_state["state"]["key"]
    key = key.numpy() if isinstance(key, torch.Tensor) else np.asarray(key)
    np_state["state"] = {**np_state["state"], "key": key.astype(np.uint32)}
    np.random.set_state(np_state)
    torch.set_rng_state(_bytes_of(state["torch"]))
    if state["cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all([_bytes_of(s) for s in state["cuda"]])


def unsharded_copy(model: nn.Module, args: ModelArgs) -> GPT | None:
    """Collective: every rank calls it. The full weights of a sharded model (FSDP, tensor parallelism) as a
    plain model on rank 0's CPU; None on the other ranks."""
    state = get_model_state_dict(model, options=_GATHER)
    if _rank() != 0:
        return None
    whole = GPT(args)
    whole.load_state_dict(state)
    return whole


def _sharded_state(model: nn.Module, optimizer: torch.optim.Optimizer) -> tuple[dict[str, Any], list[Any]]:
    """This rank's shards of model and optimizer state (DTensors under FSDP and tensor parallelism, plain tensors
    under DDP: DCP writes each replicated tensor once), and the optimizer's parameter groups (JSON)."""
    reshard(model)
    optimizer_state = get_optimizer_state_dict(model, optimizer)
    tensors = {"model": get_model_state_dict(model), "optimizer": optimizer_state["state"]}
    return tensors, cast(list[Any], optimizer_state["param_groups"])


@dataclass
class SaveInFlight:
    """A save started by `start_save`: its shards may still be written in the background (``future``)."""

    output_url: str
    step: int
    url: str
    files: list[str]
    prune_config: dict[str, Any]
    future: Future[Any] | None = None
    ephemeral: bool = False

    def done(self) -> bool:
        return self.future is None or self.future.done()


def start_save(
    output_url: str,
    step: int,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
    meta: dict[str, Any],
    tokenizer_proto: bytes | None = None,
    background: bool = False,
    group: dist.ProcessGroup | None = None,
    ephemeral: bool = False,
    stager: DefaultStager | None = None,
) -> SaveInFlight:
    """Collective: every rank calls it. Each rank writes its RNG state and starts writing its shards; rank 0 the
    JSON parts (and the tokenizer model, so the checkpoint generates and evaluates on its own). In the
    ``background`` the shards are copied to CPU memory now and written by a thread while training goes on, their
    collectives on ``group`` (give the save a process group of its own, so they never interleave with training's),
    the copy into ``stager``'s buffer when given (`staging_buffer`: kept from save to save);
    else they are written before this returns. An ``ephemeral`` save is for recovery only: never announced or
    evaluated, deleted once a newer save completes. Complete it with `finish_save`."""
    url = checkpoint_url(output_url, step)
    rank, world_size = _rank(), _world_size()
    tensors, param_groups = _sharded_state(model, optimizer)
    if rank == 0:
        storage.write_json(
            storage.join(url, "meta.json"), {**meta, "step": step, "world_size": world_size, "format": FORMAT}
        )
        storage.write_json(
            storage.join(url, TRAIN_STATE), {"param_groups": param_groups, "scheduler": scheduler.state_dict()}
        )
        if tokenizer_proto is not None:
            storage.write_bytes(storage.join(url, TOKENIZER_FILE), tokenizer_proto)
    storage.write_json(storage.join(url, _rng_file(rank)), rng_state())
    future = save_shards(tensors, storage.join(url, STATE_DIR), background, group, stager)
    files = ["meta.json", TRAIN_STATE, storage.join(STATE_DIR, INDEX)] + [_rng_file(r) for r in range(world_size)]
    files += [TOKENIZER_FILE] if tokenizer_proto is not None else []
    return SaveInFlight(output_url, step, url, files, meta["config"], future, ephemeral)


def finish_save(saving: SaveInFlight) -> str:
    """Wait for the save's shards (every rank), then rank 0 writes the manifest, which makes the checkpoint
    complete, and prunes older ones. Returns the checkpoint's URL."""
    if saving.future is not None:
        saving.future.result()  # every rank's shards and the index are written once any rank's future is done
    if _rank() == 0:
        manifest = {"step": saving.step, "format": FORMAT, "files": saving.files, "ephemeral": saving.ephemeral}
        storage.write_json(manifest_url(saving.url), manifest)
        prune_as_configured(saving.output_url, saving.prune_config)
    return saving.url


def save_checkpoint(
    output_url: str,
    step: int,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
    meta: dict[str, Any],
    tokenizer_proto: bytes | None = None,
) -> str:
    """Collective: a synchronous save, complete when it returns on rank 0."""
    url = finish_save(start_save(output_url, step, model, optimizer, scheduler, meta, tokenizer_proto))
    if dist.is_initialized():
        dist.barrier()  # the other ranks see the manifest too
    return url


def is_sharded(url: str) -> bool:
    """Whether the checkpoint is of the sharded format (else the consolidated one)."""
    return storage.exists(storage.join(url, STATE_DIR, INDEX))


def _alias_tied_head(optimizer_state: dict[str, Any], state_url: str) -> bool:
    """A pipeline's last stage keeps the optimizer state of the tied head under its own name; a checkpoint of an
    unsplit run has it under the embedding's only (one matrix, one state). Read it from there (renamed in place;
    True when it was)."""
    if TIED_HEAD not in optimizer_state or TIED_EMBEDDING in optimizer_state:
        return False
    if any(name.startswith(f"optimizer.{TIED_HEAD}.") for name in saved_tensors(state_url)):
        return False
    optimizer_state[TIED_EMBEDDING] = optimizer_state.pop(TIED_HEAD)
    return True


def load_checkpoint(
    url: str,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
) -> dict[str, Any]:
    """Collective: restore model, optimizer, scheduler and this rank's RNG; return the checkpoint's meta. Each rank
    reads the parts of the shards it holds now, whatever layout wrote them.

    A rank with no RNG file of its own (the world grew) takes rank 0's.
    """
    if not is_sharded(url):
        return _load_consolidated(url, model, optimizer, scheduler)
    tensors, _ = _sharded_state(model, optimizer)
    tied_alias = _alias_tied_head(tensors["optimizer"], storage.join(url, STATE_DIR))
    load_shards(tensors, storage.join(url, STATE_DIR))
    if tied_alias:
        tensors["optimizer"][TIED_HEAD] = tensors["optimizer"].pop(TIED_EMBEDDING)
    train_state = storage.read_json(storage.join(url, TRAIN_STATE))
    set_model_state_dict(model, tensors["model"])
    optimizer_state = {"state": tensors["optimizer"], "param_groups": train_state["param_groups"]}
    set_optimizer_state_dict(model, optimizer, optimizer_state)
    scheduler.load_state_dict(train_state["scheduler"])
    rng_url = storage.join(url, _rng_file(_rank()))
    set_rng_state(storage.read_json(rng_url if storage.exists(rng_url) else storage.join(url, _rng_file(0))))
    return read_meta(url)


def _load_consolidated(
    url: str,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
) -> dict[str, Any]:
    """`load_checkpoint` for the consolidated format (one `model.pt`, gathered on rank 0 when it was written)."""
    set_model_state_dict(model, _load_torch(storage.join(url, "model.pt")), options=_SCATTER)
    saved = _load_torch(storage.join(url, "optimizer.pt"))
    set_optimizer_state_dict(model, optimizer, saved["optimizer"], options=_SCATTER)
    scheduler.load_state_dict(saved["scheduler"])
    rng_url = storage.join(url, f"rng-rank-{_rank():05d}.pt")
    set_rng_state(_load_torch(rng_url if storage.exists(rng_url) else storage.join(url, "rng-rank-00000.pt")))
    return read_meta(url)


def load_model(url: str, device: torch.device | str = "cpu") -> tuple[GPT, dict[str, Any]]:
    """The trained network alone (for evaluation, sampling, export), rebuilt from the checkpoint's model args; a
    sharded checkpoint is consolidated here, in this process, with no process group."""
    meta = read_meta(url)
    model = GPT(ModelArgs(**meta["model_args"]))
    if is_sharded(url):
        state = {"model": model.state_dict()}
        load_shards(state, storage.join(url, STATE_DIR), whole=True)
        model.load_state_dict(state["model"])
    else:
        model.load_state_dict(_load_torch(storage.join(url, "model.pt")))
    return model.to(device).eval(), meta
