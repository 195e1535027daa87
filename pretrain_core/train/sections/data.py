"""What a run reads: the token shards, their tokenizer, and how many sequences make a step."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import Field, model_validator

from pretrain_core.config_base import StrictModel

if TYPE_CHECKING:
    from pretrain_core.train.shards.mixing import MixedBatches
    from pretrain_core.train.shards.sequences import Sequences, TrainBatches


class MixPoint(StrictModel):
    at: float = Field(ge=0.0, le=1.0, description="Fraction of train.max_steps from which these weights hold.")
    weights: dict[str, float] = Field(
        min_length=1,
        description="Share of sequences per group, summing to 1: a domain (general, specialist, code) or a domain's "
        "quality bucket (general/head: the shards packed with pack.by_quality_bucket).",
    )

    @model_validator(mode="after")
    def _shares(self) -> MixPoint:
        if any(w < 0 for w in self.weights.values()) or abs(sum(self.weights.values()) - 1) > 1e-6:
            raise ValueError(f"weights at {self.at} must be non-negative and sum to 1: {self.weights}")
        nested = sorted(g for g in self.weights if "/" in g and g.split("/", 1)[0] in self.weights)
        if nested:
            raise ValueError(f"weights at {self.at} name {nested} and their domain too: a sequence would count twice")
        return self


class MixingConfig(StrictModel):
    """Weights per group over the run: one point is constant mixing; several are stages (`interpolate: step`)
    or a linear anneal between them (`linear`); an anneal on the best text is a last point weighing head buckets."""

    points: list[MixPoint] = Field(min_length=1, description="Weights from each fraction of the run, in order.")
    interpolate: Literal["step", "linear"] = Field(
        default="step", description="step: each point's weights hold until the next; linear: they glide between."
    )
    curriculum: Literal["none", "ascending", "descending"] = Field(
        default="none",
        description="The first pass over each group in order of its sequences' quality scores (ascending: the "
        "best last); later passes, and none, in a seeded permutation.",
    )

    @model_validator(mode="after")
    def _ordered(self) -> MixingConfig:
        ats = [p.at for p in self.points]
        if ats[0] != 0.0 or any(b <= a for a, b in itertools.pairwise(ats)):
            raise ValueError(f"mixing points must start at 0 and increase: {ats}")
        return self

    @property
    def groups(self) -> list[str]:
        return sorted({g for p in self.points for g in p.weights})

    def weights_at(self, fraction: float) -> np.ndarray:
        """Every group's weight (in `groups` order) at ``fraction`` of the run."""
        index = max(i for i, p in enumerate(self.points) if p.at <= fraction)
        here = self._vector(self.points[index])
        if self.interpolate == "step" or index == len(self.points) - 1:
            return here
        start, end = self.points[index].at, self.points[index + 1].at
        share = (fraction - start) / (end - start)
        return (1 - share) * here + share * self._vector(self.points[index + 1])

    def _vector(self, point: MixPoint) -> np.ndarray:
        return np.array([point.weights.get(g, 0.0) for g in self.groups])


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
    mixing: MixingConfig | None = Field(
        default=None,
        description="Draw training sequences by domain weights that may follow a schedule (constant, staged, "
        "annealed) instead of in the order the corpus build mixed them.",
    )

    def build_batches(
        self, sequences: Sequences, rank: int, world_size: int, seed: int, max_steps: int, state: dict[str, Any]
    ) -> TrainBatches | MixedBatches:
        """The rank's endless micro-batches, resumed from ``state`` (a checkpoint's "data")."""
        from pretrain_core.train.shards.mixing import MixedBatches
        from pretrain_core.train.shards.sequences import TrainBatches

        if self.mixing is None:
            return TrainBatches(sequences, self.micro_batch_size, rank, world_size, seed, state)
        draws = max_steps * self.micro_batch_size * world_size * self.grad_accum_steps
        return MixedBatches(sequences, self.mixing, self.micro_batch_size, rank, world_size, seed, draws, state)
