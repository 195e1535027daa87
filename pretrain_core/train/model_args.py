"""The network's shape, apart from the network: configs and checkpoint manifests read it without importing torch."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

PositionEncoding = Literal["rope", "alibi", "learned", "sinusoidal"]


@dataclass(frozen=True)
class ModelArgs:
    """Everything needed to rebuild the network; stored in every checkpoint."""

    vocab_size: int
    n_layer: int
    n_head: int
    d_model: int
    max_seq_len: int
    rope_base: float = 10000.0
    norm_eps: float = 1e-5
    position_encoding: PositionEncoding = "rope"
    dropout: float = 0.0  # embedding, attention-probability and residual dropout while training

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_head

    def to_dict(self) -> dict[str, int | float | str]:
        return asdict(self)
