"""The network's shape, apart from the network: configs and checkpoint manifests read it without importing torch."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

PositionEncoding = Literal["rope", "alibi", "learned", "sinusoidal"]
Objective = Literal["causal", "masked"]  # what the model predicts (train/objective.py)


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
    causal: bool = True  # False: bidirectional attention, for the masked objective
    mask_token_id: int | None = None  # the [MASK] id of a masked-objective model (the last row of its vocabulary)

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_head

    def to_dict(self) -> dict[str, int | float | str | bool | None]:
        return asdict(self)
