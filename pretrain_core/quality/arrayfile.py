"""A minimal container for named numpy arrays plus JSON metadata: deterministic bytes, zero-copy loading.

`np.savez` stamps the current time into its zip entries, so two identical fits would differ byte-wise; this
format is a magic string, a sorted-key JSON header and 8-byte-aligned little-endian array data.
"""

from __future__ import annotations

import json
import struct
from typing import Any

import numpy as np

MAGIC = b"PTARRAY1"


def pack_arrays(meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> bytes:
    """Serialise ``meta`` (JSON-able) and ``arrays`` (in the given order) to bytes."""
    specs, blobs, offset = [], [], 0
    for name, array in arrays.items():
        dtype = array.dtype.newbyteorder("<")
        data = np.ascontiguousarray(array, dtype=dtype).tobytes()
        specs.append({"name": name, "dtype": dtype.str, "shape": list(array.shape), "offset": offset})
        blobs.append(data + b"\0" * (-len(data) % 8))
        offset += len(blobs[-1])
    header = json.dumps({"meta": meta, "arrays": specs}, sort_keys=True, separators=(",", ":")).encode()
    header += b" " * (-len(header) % 8)
    return MAGIC + struct.pack("<Q", len(header)) + header + b"".join(blobs)


def unpack_arrays(data: bytes) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Inverse of `pack_arrays`; the arrays are read-only views into ``data``."""
    if data[: len(MAGIC)] != MAGIC:
        raise ValueError("not an array file (bad magic)")
    (header_len,) = struct.unpack_from("<Q", data, len(MAGIC))
    start = len(MAGIC) + 8
    header = json.loads(data[start : start + header_len])
    base = start + header_len
    arrays = {}
    for spec in header["arrays"]:
        dtype = np.dtype(spec["dtype"])
        count = int(np.prod(spec["shape"], dtype=np.int64))
        flat = np.frombuffer(data, dtype=dtype, count=count, offset=base + spec["offset"])
        arrays[spec["name"]] = flat.reshape(spec["shape"])
    return header["meta"], arrays
