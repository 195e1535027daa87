"""The network's shape, apart from the network: configs and checkpoint manifests read it without importing torch."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

PositionEncoding = Literal["rope", "alibi", "learned", "sinusoidal"]
Objective = Literal["causal", "masked"]  # what the model predicts (train/model/objective.py)
Parametrization = Literal["standard", "mup"]
RopeScaling = Literal["none", "linear", "ntk", "yarn", "llama3"]  # train/model/rope_scaling.py
MoeRouter = Literal["softmax", "sigmoid"]
MoeBalance = Literal["loss", "bias"]
BlockKind = Literal["gpt", "llama"]  # the MLP: GELU (GPT-2) or SwiGLU (Llama, exportable to Hugging Face)


@dataclass(frozen=True)
class ModelArgs:
    """Everything needed to rebuild the network; stored in every checkpoint."""

    vocab_size: int
    n_layer: int
    n_head: int
    d_model: int
    max_seq_len: int
    rope_base: float = 10000.0
    rope_scaling: RopeScaling = "none"  # how positions past rope_original_seq_len are mapped (rope_scaling.py)
    rope_scaling_factor: float = 1.0
    rope_original_seq_len: int | None = None  # the length the model was first trained at (default: max_seq_len)
    norm_eps: float = 1e-5
    position_encoding: PositionEncoding = "rope"
    dropout: float = 0.0  # embedding, attention-probability and residual dropout while training
    causal: bool = True  # False: bidirectional attention, for the masked objective
    mask_token_id: int | None = None  # the [MASK] id of a masked-objective model (the last row of its vocabulary)
    block: BlockKind = "gpt"
    n_kv_head: int | None = None  # grouped-query attention: key/value heads shared by n_head / n_kv_head queries
    moe_experts: int = 0  # 0: a dense MLP; else a mixture of this many experts (train/model/moe.py)
    moe_top_k: int = 2
    moe_router: MoeRouter = "softmax"
    moe_balance: MoeBalance = "loss"
    moe_capacity_factor: float | None = None
    moe_shared_expert: bool = False
    moe_aux_weight: float = 0.01
    moe_z_weight: float = 0.001
    parametrization: Parametrization = "standard"
    mup_base_width: int = 128  # under µP: the width at which it equals standard parametrization

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_head

    @property
    def kv_heads(self) -> int:
        return self.n_kv_head or self.n_head

    @property
    def ffn_hidden(self) -> int:
        """The MLP's hidden width: 4 x d_model for GELU; for SwiGLU's three matrices 8/3 x d_model rounded up to a
        multiple of 64 (about the same parameters, Llama's choice)."""
        if self.block == "gpt":
            return 4 * self.d_model
        return 64 * -(-8 * self.d_model // (3 * 64))

    @property
    def expert_hidden(self) -> int:
        """Each expert's hidden width: the dense MLP's split over the k experts a token visits, so a token costs
        what it costs in the dense model (1 expert, top-1: the dense MLP itself)."""
        return max(1, self.ffn_hidden // self.moe_top_k)

    @property
    def width_mult(self) -> float:
        """How many times the µP base width this model is (1 under standard parametrization)."""
        return self.d_model / self.mup_base_width if self.parametrization == "mup" else 1.0

    @property
    def attention_scale(self) -> float | None:
        """Query-key scale: µP's 1 / head_dim, matched to 1 / sqrt(head_dim) at the base width; None: SDPA's
        default 1 / sqrt(head_dim)."""
        if self.parametrization != "mup":
            return None
        base_head_dim = self.mup_base_width / self.n_head
        return base_head_dim**0.5 / self.head_dim

    def to_dict(self) -> dict[str, int | float | str | bool | None]:
        return asdict(self)
