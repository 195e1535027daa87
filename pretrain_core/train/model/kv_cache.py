"""Keys and values of the tokens a model has already read, so each generated token costs one position, not T.

One cache serves one generation: every layer writes its new keys and values at ``length`` and attends over
everything before. Buffers are allocated on the first write (their head count is the layer's own, which under
tensor parallelism is a share of the model's) and sized to the model's window.
"""

from __future__ import annotations

import torch


class KVCache:
    def __init__(self, n_layer: int, max_len: int) -> None:
        self.max_len = max_len
        self.length = 0  # positions already cached; the next forward's tokens start here
        self._keys: list[torch.Tensor | None] = [None] * n_layer
        self._values: list[torch.Tensor | None] = [None] * n_layer

    def update(self, layer: int, keys: torch.Tensor, values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Store (B, H, t, D) keys/values after the cached ones; return all of them, (B, H, length + t, D)."""
        end = self.length + keys.shape[2]
        if end > self.max_len:
            raise ValueError(f"the cache holds {self.max_len} positions; {end} asked")
        cached_keys, cached_values = self._keys[layer], self._values[layer]
        if cached_keys is None or cached_values is None or cached_keys.shape[0] != keys.shape[0]:
            shape = (keys.shape[0], keys.shape[1], self.max_len, keys.shape[3])
            cached_keys = keys.new_zeros(shape)
            cached_values = values.new_zeros(shape)
            self._keys[layer], self._values[layer] = cached_keys, cached_values
        cached_keys[:, :, self.length : end] = keys
        cached_values[:, :, self.length : end] = values
        return cached_keys[:, :, :end], cached_values[:, :, :end]

    def advance(self, steps: int) -> None:
        """Called once per forward, after every layer has written its ``steps`` new positions."""
        self.length += steps

    def select(self, rows: torch.Tensor) -> None:
        """Keep (and repeat) batch rows: beam search continues each surviving beam from its parent's cache."""
        for store in (self._keys, self._values):
            for layer, buffer in enumerate(store):
                if buffer is not None:
                    store[layer] = buffer.index_select(0, rows)
