"""torch.distributed.checkpoint (DCP) on any fsspec URL, with no pickle anywhere.

DCP's own writer pickles the checkpoint's index (`.metadata`) and its planner would unpickle any non-tensor value;
here the index is JSON (`index.json`) and only tensors are saved, each shard file read back by torch's weights-only
loader. Everything else a checkpoint holds (optimizer hyperparameters, schedule, RNG) is JSON beside it.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Any

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint._fsspec_filesystem import FsspecReader, FsspecWriter
from torch.distributed.checkpoint.filesystem import CURRENT_DCP_VERSION, _StorageInfo
from torch.distributed.checkpoint.metadata import (
    ChunkStorageMetadata,
    Metadata,
    MetadataIndex,
    StorageMeta,
    TensorProperties,
    TensorStorageMetadata,
)
from torch.distributed.checkpoint.staging import DefaultStager, StagingOptions
from torch.distributed.checkpoint.storage import WriteResult

from pretrain_core import storage

INDEX = "index.json"  # the JSON form of DCP's Metadata, written last by the coordinating rank


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _dtype(name: str) -> torch.dtype:
    dtype = getattr(torch, name, None)
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"{INDEX} names an unknown tensor dtype {name!r}")
    return dtype


def metadata_to_json(metadata: Metadata) -> dict[str, Any]:
    """DCP's Metadata as plain JSON; a checkpoint holding anything but tensors is refused (it would need pickle)."""
    tensors = {}
    for fqn, item in metadata.state_dict_metadata.items():
        if not isinstance(item, TensorStorageMetadata):
            raise TypeError(f"{fqn} is not a tensor: sharded checkpoints hold tensors only (the rest goes in JSON)")
        tensors[fqn] = {
            "dtype": _dtype_name(item.properties.dtype),
            "requires_grad": item.properties.requires_grad,
            "size": list(item.size),
            "chunks": [{"offsets": list(c.offsets), "sizes": list(c.sizes)} for c in item.chunks],
        }
    return {
        "version": metadata.version,
        "tensors": tensors,
        "storage": [
            {
                "fqn": index.fqn,
                "offset": list(index.offset) if index.offset is not None else None,
                "index": index.index,
                "path": info.relative_path,
                "at": info.offset,
                "length": info.length,
                "transforms": list(info.transform_descriptors or ()),
            }
            for index, info in (metadata.storage_data or {}).items()
        ],
        "planner_data": {key: list(path) for key, path in (metadata.planner_data or {}).items()},
    }


def metadata_from_json(data: dict[str, Any]) -> Metadata:
    tensors: dict[str, Any] = {
        fqn: TensorStorageMetadata(
            properties=TensorProperties(dtype=_dtype(item["dtype"]), requires_grad=bool(item["requires_grad"])),
            size=torch.Size(item["size"]),
            chunks=[ChunkStorageMetadata(torch.Size(c["offsets"]), torch.Size(c["sizes"])) for c in item["chunks"]],
        )
        for fqn, item in data["tensors"].items()
    }
    storage_data = {
        MetadataIndex(entry["fqn"], entry["offset"], entry["index"]): _StorageInfo(
            relative_path=entry["path"],
            offset=int(entry["at"]),
            length=int(entry["length"]),
            transform_descriptors=entry["transforms"] or None,
        )
        for entry in data["storage"]
    }
    planner_data = {key: tuple(path) for key, path in data["planner_data"].items()}
    return Metadata(tensors, planner_data=planner_data, storage_data=storage_data, version=data["version"])


class JsonIndexWriter(FsspecWriter):
    """DCP's fsspec writer with the index in JSON, written atomically once every rank's shards are written."""

    def __init__(self, url: str) -> None:
        fs, _ = storage.filesystem(url)
        super().__init__(url, sync_files=False, **fs.storage_options)

    def finish(self, metadata: Metadata, results: list[list[WriteResult]]) -> None:
        metadata.version = CURRENT_DCP_VERSION
        metadata.storage_data = {result.index: result.storage_data for rank in results for result in rank}
        storage.write_json(storage.join(os.fspath(self.path), INDEX), metadata_to_json(metadata))


class JsonIndexReader(FsspecReader):
    """DCP's fsspec reader of a checkpoint whose index is JSON."""

    def __init__(self, url: str) -> None:
        fs, _ = storage.filesystem(url)
        super().__init__(url, **fs.storage_options)

    def read_metadata(self, *args: Any, **kwargs: Any) -> Metadata:
        metadata = metadata_from_json(storage.read_json(storage.join(os.fspath(self.path), INDEX)))
        metadata.storage_meta = StorageMeta(load_id=self.load_id)
        return metadata


def _single_process() -> bool:
    return not dist.is_initialized()


@contextmanager
def _quiet_when_single() -> Iterator[None]:
    """DCP warns on every single-process call that it assumes one process; that is the intent here."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="torch.distributed is disabled, unavailable or uninitialized")
        yield


def staging_buffer(device: torch.device) -> DefaultStager:
    """Where background saves copy the shards: kept from one save to the next (DCP's stager caches a CPU copy
    of each tensor it has staged), so only the first save allocates it; pinned on a GPU for fast copies. It costs
    a CPU copy of this rank's shards for the life of the run. Close it when done."""
    pinned = device.type == "cuda"  # the copy itself stays blocking: the save must hold this step's values
    return DefaultStager(StagingOptions(use_pinned_memory=pinned, use_shared_memory=False, use_async_staging=False,
                                        use_non_blocking_copy=False))  # fmt: skip


def save_shards(
    tensors: dict[str, Any],
    url: str,
    background: bool = False,
    group: dist.ProcessGroup | None = None,
    stager: DefaultStager | None = None,
) -> Future[Any] | None:
    """Collective: write this rank's shards of ``tensors`` under ``url``. In the ``background``: copied to CPU
    memory now (into ``stager``'s buffer when given), written by a thread; the returned future is done once every
    rank's shards and the index are."""
    writer = JsonIndexWriter(url)
    with _quiet_when_single():
        if background:
            saving = dcp.async_save(
                tensors, storage_writer=writer, process_group=group, async_stager=stager, no_dist=_single_process()
            )
            return saving if isinstance(saving, Future) else saving.upload_completion
        dcp.save(tensors, storage_writer=writer, process_group=group, no_dist=_single_process())
    return None


def saved_tensors(url: str) -> set[str]:
    """The flattened names of every tensor the checkpoint at ``url`` holds (``model.blocks.0.mlp.up.weight``...)."""
    return set(storage.read_json(storage.join(url, INDEX))["tensors"])


def load_shards(tensors: dict[str, Any], url: str, whole: bool = False) -> None:
    """Fill ``tensors`` in place from the checkpoint at ``url``: collective, each rank reading what its shards
    cover, or with ``whole`` this process alone reading full tensors (no process group needed)."""
    with _quiet_when_single():
        dcp.load(tensors, storage_reader=JsonIndexReader(url), no_dist=whole or _single_process())
