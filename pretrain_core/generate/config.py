"""How to decode: one validated model shared by `pretrain generate`, the evaluation's samples and the server."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from pretrain_core.config_base import Seed, StrictModel
from pretrain_core.limits import MAX_VOCAB

Strategy = Literal["greedy", "sample", "beam"]


class GenerationConfig(StrictModel):
    """Decoding settings. ``temperature: 0`` means greedy whatever the strategy says (the usual convention)."""

    strategy: Strategy = Field(
        default="sample",
        description="greedy: the most likely token each step; sample: draw from the (filtered) distribution; "
        "beam: keep the `beams` most likely continuations and return the best.",
    )
    max_new_tokens: int = Field(default=64, ge=1, le=8192, description="Tokens generated at most.")
    temperature: float = Field(default=0.8, ge=0, le=10, description="Softmax temperature of sampling; 0 = greedy.")
    top_k: int | None = Field(
        le=MAX_VOCAB, default=40, ge=1, description="Sample among the k most likely tokens (none: all)."
    )
    top_p: float | None = Field(
        default=None, gt=0, le=1, description="Nucleus sampling: the smallest set of tokens whose mass reaches p."
    )
    repetition_penalty: float = Field(
        default=1.0,
        ge=1.0,
        le=10.0,
        description="CTRL's penalty on every token already in the text (logit / p if positive, x p if negative): "
        "1 = off; 1.1-1.3 curbs loops.",
    )
    beams: int = Field(default=4, ge=1, le=64, description="Beam width of strategy beam.")
    length_penalty: float = Field(
        default=1.0,
        ge=0,
        le=5,
        description="Beam search ranks finished texts by log-prob / tokens^length_penalty (0: raw log-prob).",
    )
    stop_at_eos: bool = Field(default=True, description="End a text at the tokenizer's end-of-document id.")
    use_cache: bool = Field(default=True, description="Keep keys/values of read tokens (off: re-read the context).")
    seed: Seed = Field(default=1234, description="Seed of sampling, so a rerun prints the same text.")

    @property
    def effective_strategy(self) -> Strategy:
        """The strategy that runs: sampling at temperature 0 is greedy decoding."""
        return "greedy" if self.strategy == "sample" and self.temperature == 0 else self.strategy
