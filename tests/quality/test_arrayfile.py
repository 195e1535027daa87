"""The model container: what goes in comes out, bit for bit, and equal inputs give equal bytes."""

from __future__ import annotations

import numpy as np
import pytest

from pretrain_core.quality.arrayfile import pack_arrays, unpack_arrays


def test_round_trip_keeps_values_dtypes_shapes_and_meta() -> None:
    arrays: dict[str, np.ndarray] = {
        "keys": np.array([1, 2**63 + 5, 2**64 - 1], dtype=np.uint64),
        "probs": np.array([0.25, 0.5, 1e-7], dtype=np.float32),
        "grid": np.arange(7, dtype=np.int16).reshape(7, 1),
        "empty": np.zeros(0, dtype=np.float64),
    }
    meta, back = unpack_arrays(pack_arrays({"order": 4, "name": "prose.zh"}, arrays))
    assert meta == {"order": 4, "name": "prose.zh"}
    assert list(back) == list(arrays)
    for name, array in arrays.items():
        assert back[name].dtype == array.dtype and back[name].shape == array.shape
        assert np.array_equal(back[name], array)


def test_equal_inputs_give_equal_bytes_and_data_is_aligned() -> None:
    arrays: dict[str, np.ndarray] = {"a": np.arange(3, dtype=np.uint8), "b": np.arange(5, dtype=np.uint64)}
    first, second = pack_arrays({"x": 1}, arrays), pack_arrays({"x": 1}, dict(arrays))
    assert first == second
    _, back = unpack_arrays(first)
    assert back["b"].ctypes.data % 8 == np.frombuffer(first, np.uint8).ctypes.data % 8  # 8-byte aligned offset


def test_rejects_other_files() -> None:
    with pytest.raises(ValueError, match="magic"):
        unpack_arrays(b"PK\x03\x04 a zip file, not ours")
