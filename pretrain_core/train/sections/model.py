"""The network's settings: a preset or an explicit shape, the block, attention, MoE and positions. It builds the
network's arguments (`ModelArgs`, stored in every checkpoint) and the network itself."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Literal

from pydantic import Field, model_validator

from pretrain_core.config_base import StrictModel
from pretrain_core.train.model.args import (
    BlockKind,
    ModelArgs,
    MoeBalance,
    MoeRouter,
    Objective,
    Parametrization,
    PositionEncoding,
    RopeScaling,
)

if TYPE_CHECKING:
    from pretrain_core.train.model.gpt import GPT

ModelPreset = Literal["tiny", "small", "124m", "350m", "760m", "2b-deep"]
# (n_layer, n_head, d_model). `tiny` trains the CPU demo in minutes; `124m` is GPT-2 small; the larger ones are the
# source articles' sizes (hidden 768/1024/1536, heads 12/16/32, 12-72 layers): 350m is GPT-2 medium's shape,
# 760m GPT-3 Large's, 2b-deep the articles' 72 layers at 1536 wide. Parameters below count a 32k vocabulary.
MODEL_PRESETS: dict[str, tuple[int, int, int]] = {
    "tiny": (4, 4, 128),  # 1.8M with an 8k vocabulary
    "small": (6, 6, 384),  # 23M
    "124m": (12, 12, 768),  # 110M
    "350m": (24, 16, 1024),  # 335M
    "760m": (24, 16, 1536),  # 730M
    "2b-deep": (72, 32, 1536),  # 2.1B
}
_ARGS_FIELDS = {field.name for field in dataclasses.fields(ModelArgs)}


class ModelConfig(StrictModel):
    """The network. Its fields are `ModelArgs`' own under the same names (passed on as they are, but the shape,
    which the preset fills), plus the preset and the objective; the vocabulary and length come from the run."""

    preset: ModelPreset | None = Field(
        default="tiny", description="Model size preset; explicit n_layer/n_head/d_model override its values."
    )
    n_layer: int | None = Field(default=None, ge=1, le=128, description="Transformer blocks (overrides the preset).")
    n_head: int | None = Field(default=None, ge=1, le=128, description="Attention heads (overrides the preset).")
    d_model: int | None = Field(default=None, ge=16, le=16384, description="Residual width (overrides the preset).")
    block: BlockKind = Field(
        default="gpt",
        description="gpt: GELU MLP (GPT-2's); llama: SwiGLU MLP (8/3 x d_model hidden), the block Hugging Face's "
        "LlamaForCausalLM runs, so `pretrain export --format hf` can write it. Both: pre-norm RMSNorm, no biases.",
    )
    n_kv_head: int | None = Field(
        default=None,
        ge=1,
        le=128,
        description="Grouped-query attention: key/value heads, each shared by n_head / n_kv_head query heads (a "
        "smaller KV cache); must divide n_head. Unset: one per query head.",
    )
    moe_experts: int = Field(
        default=0,
        ge=0,
        le=512,
        description="0: a dense MLP. Else a mixture of this many experts per block, each token routed to its top "
        "moe_top_k; each expert is the dense MLP's width / moe_top_k, so a token costs what it costs dense.",
    )
    moe_top_k: int = Field(default=2, ge=1, le=64, description="Experts each token visits.")
    moe_router: MoeRouter = Field(default="softmax", description="softmax (Switch, Mixtral) or sigmoid (DeepSeek-V3).")
    moe_balance: MoeBalance = Field(
        default="loss",
        description="loss: Switch's load-balancing loss (weight 0.01) plus the router z-loss (0.001); bias: "
        "DeepSeek-V3's auxiliary-loss-free expert bias, nudged after each step towards idle experts.",
    )
    moe_capacity_factor: float | None = Field(
        default=None,
        gt=0,
        le=64,
        description="An expert takes at most this x tokens x top_k / experts tokens per forward; the rest are "
        "dropped (residual only) and counted in TensorBoard. Unset: dropless.",
    )
    moe_shared_expert: bool = Field(default=False, description="Add an expert every token passes through.")
    parametrization: Parametrization = Field(
        default="standard",
        description="standard, or mup (maximal update parametrization, with m = d_model / mup_base_width): hidden "
        "weights initialised with std / sqrt(m) and stepped with lr / m, logits divided by m, attention scaled by "
        "1/head_dim; a learning rate tuned at the base width then holds at other widths (`pretrain sweep`).",
    )
    mup_base_width: int = Field(
        default=128, ge=8, le=65536, description="µP: the width at which it equals standard parametrization."
    )
    objective: Objective = Field(
        default="causal",
        description="causal: predict the next token (what generation needs). masked: BERT's masked language model, "
        "mask_rate of the tokens hidden (80 % [MASK], 10 % random, 10 % kept), bidirectional attention, loss on "
        "the hidden ones only.",
    )
    mask_rate: float = Field(default=0.15, gt=0, lt=1, description="masked objective: share of positions hidden.")
    position_encoding: PositionEncoding = Field(
        default="rope",
        description="rope (rotary, relative) | alibi (per-head distance penalty, relative) | learned | sinusoidal "
        "(absolute, added to the embeddings). The articles recommend a relative one for long contexts.",
    )
    rope_scaling: RopeScaling = Field(
        default="none",
        description="How RoPE positions past rope_original_seq_len are mapped onto trained angles: linear "
        "(position interpolation), ntk (base change), yarn, llama3; none. A factor of 1 is plain RoPE.",
    )
    rope_scaling_factor: float = Field(default=1.0, ge=1, le=1024, description="Context stretch of rope_scaling.")
    rope_original_seq_len: int | None = Field(
        default=None,
        ge=8,
        le=1_048_576,
        description="The length the model was first trained at, which rope_scaling stretches from (default: "
        "init_from's, else seq_len).",
    )
    dropout: float = Field(
        default=0.0,
        ge=0,
        lt=1,
        description="Dropout on embeddings, attention probabilities and residual writes while training; the "
        "articles use 0.1, deduplicated pretraining data usually needs none.",
    )

    @model_validator(mode="after")
    def _check_shape(self) -> ModelConfig:
        _, n_head, d_model = self.shape()
        if d_model % n_head or (d_model // n_head) % 2:
            raise ValueError(f"d_model {d_model} must split into {n_head} heads of even size (RoPE rotates pairs)")
        if self.moe_experts and self.moe_top_k > self.moe_experts:
            raise ValueError(f"moe_top_k {self.moe_top_k} exceeds the {self.moe_experts} experts")
        if self.n_kv_head is not None and n_head % self.n_kv_head:
            raise ValueError(f"n_kv_head {self.n_kv_head} must divide n_head {n_head} (each shares a group of queries)")
        return self

    def shape(self) -> tuple[int, int, int]:
        """(n_layer, n_head, d_model) after applying explicit values over the preset."""
        preset = MODEL_PRESETS[self.preset] if self.preset else (None, None, None)
        shape = (self.n_layer or preset[0], self.n_head or preset[1], self.d_model or preset[2])
        if None in shape:
            raise ValueError("without a model preset, n_layer, n_head and d_model must all be set")
        return shape  # type: ignore[return-value]

    @property
    def width_mult(self) -> float:
        """How many times the µP base width this model is (1 under standard parametrization)."""
        return self.shape()[2] / self.mup_base_width if self.parametrization == "mup" else 1.0

    def args(self, vocab_size: int, seq_len: int) -> ModelArgs:
        """The network for a tokenizer of ``vocab_size`` pieces and sequences of ``seq_len``; the masked objective
        adds a [MASK] row."""
        n_layer, n_head, d_model = self.shape()
        masked = self.objective == "masked"
        return ModelArgs(
            vocab_size=vocab_size + masked, n_layer=n_layer, n_head=n_head, d_model=d_model, max_seq_len=seq_len,
            causal=not masked, mask_token_id=vocab_size if masked else None,
            **self.model_dump(include=_ARGS_FIELDS - {"n_layer", "n_head", "d_model"}),
        )  # fmt: skip

    def build(self, vocab_size: int, seq_len: int) -> GPT:
        """The network itself, initialised (torch is imported here, not with the config)."""
        from pretrain_core.train.model.gpt import GPT

        return GPT(self.args(vocab_size, seq_len))
