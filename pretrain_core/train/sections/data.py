"""What a run reads: the token shards, their tokenizer, and how many sequences make a step."""

from __future__ import annotations

from pydantic import Field

from pretrain_core.config_base import StrictModel


class DataConfig(StrictModel):
    """The training data and the batch each rank reads."""

    tokens_url: str = Field(
        default="outputs/demo/corpus/tokenize", description="Tokenization output root (holds data/*.parquet)."
    )
    tokenizer_url: str = Field(
        default="outputs/demo/corpus/tokenizer/tokenizer.model", description="SentencePiece model the shards use."
    )
    seq_len: int = Field(default=256, ge=8, le=8192, description="Tokens per training sequence; must match the shards.")
    micro_batch_size: int = Field(
        default=16, ge=1, le=4096, description="Sequences per rank per forward/backward pass."
    )
    grad_accum_steps: int = Field(default=1, ge=1, le=1024, description="Micro-batches accumulated per optimizer step.")
