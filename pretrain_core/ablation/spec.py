"""An ablation's arms and budgets, loaded from YAML (`pretrain ablate --arms ARMS.yaml`).

Each arm is a list of dotted overrides on one base pipeline config. Every arm writes under the same root with the
`by_config` layout, so arms share every corpus stage their settings agree on (an arm that changes only the quality
cut-offs reuses ingest to PII and the quality fit of the others). Each arm's corpus then trains the same proxy
model on the same number of tokens (`token_budget`, rounded up to whole steps), once per seed.
"""

from __future__ import annotations

import math
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field, ValidationError, model_validator

from pretrain_core import storage
from pretrain_core.config import ConfigError, PipelineConfig, format_validation_error, load_config
from pretrain_core.config_base import Seed, StrictModel
from pretrain_core.limits import MAX_CORPUS_TOKENS, MAX_DOC_CHARS
from pretrain_core.pipeline import CorpusPipeline, training_config
from pretrain_core.train.config import TrainConfig

CPU_PRESET = Path(str(files("pretrain_core").joinpath("defaults", "ablation-cpu.yaml")))


# What an arm may change of training: what the model is fed and in what order, not the model or its optimiser.
FED_KEYS = ("train.data.mixing",)


class Arm(StrictModel):
    """One candidate corpus: overrides on the base config."""

    description: str = Field(default="", description="What the arm changes, for the report.")
    overrides: list[str] = Field(default=[], description="Dotted overrides on the base config (KEY=VALUE).")


class HeldOut(StrictModel):
    """The held-out set every arm is scored on."""

    arm: str | None = Field(
        default=None,
        description="The arm whose test-split documents make the shared held-out set (default: the baseline). "
        "Only documents no arm trains on are kept.",
    )
    docs_per_domain: int = Field(default=48, ge=1, le=100_000, description="Held-out documents per domain.")
    max_chars: int = Field(
        le=MAX_DOC_CHARS, default=4000, ge=100, description="Characters scored per held-out document at most."
    )
    zero_shot_items: int = Field(
        default=40, ge=0, le=10_000, description="Zero-shot items per task and language group, from that text."
    )
    seed: Seed = Field(default=1234, description="Seed of the document sample and the zero-shot items.")


class AblationSpec(StrictModel):
    """An ablation: the arms, the baseline, the proxy model's budget and seeds, the held-out set."""

    name: str = Field(default="ablation", description="Names the report and the Prefect artifacts.")
    output_root: str = Field(default="outputs/ablation", description="Where every arm's stages and runs go (URL).")
    base_config: str | None = Field(default=None, description="Pipeline YAML (default: the embedded demo config).")
    base_overrides: list[str] = Field(default=[], description="Overrides applied to every arm before its own.")
    arms: dict[str, Arm] = Field(min_length=2, description="Arm name → overrides; at least two.")
    baseline: str = Field(description="The arm every other is compared with.")
    seeds: int = Field(
        default=3, ge=1, le=64, description="Proxy models per arm (seeds first_seed, first_seed+1, ...)."
    )
    first_seed: Seed = Field(default=1234, description="Training seed of the first proxy model of every arm.")
    token_budget: int = Field(
        default=400_000,
        ge=1,
        le=MAX_CORPUS_TOKENS,
        description="Tokens each proxy model trains on (rounded up to steps).",
    )
    curve_points: int = Field(default=4, ge=1, le=100, description="Checkpoints per run scored on the held-out set.")
    train_overrides: list[str] = Field(
        default=[], description="Overrides of the proxy model and optimiser (train.*), the same for every arm."
    )
    heldout: HeldOut = Field(default_factory=HeldOut, description="The shared held-out set.")

    @model_validator(mode="after")
    def _known_arms(self) -> AblationSpec:
        for name in (self.baseline, self.heldout.arm):
            if name is not None and name not in self.arms:
                raise ValueError(f"arm {name!r} is not among the arms {sorted(self.arms)}")
        for name, arm in self.arms.items():
            keys = [o.split("=", 1)[0].strip() for o in arm.overrides]
            if any(k.startswith(("train.", "storage.")) and not k.startswith(FED_KEYS) for k in keys):
                raise ValueError(
                    f"arm {name!r} overrides train.* or storage.*: every arm trains the same model (only what it is "
                    f"fed may differ: {', '.join(FED_KEYS)})"
                )
        return self

    @property
    def heldout_arm(self) -> str:
        return self.heldout.arm or self.baseline

    def seed_values(self) -> list[int]:
        return [self.first_seed + i for i in range(self.seeds)]

    def arm_config(self, arm: str) -> PipelineConfig:
        """The arm's pipeline config: base, shared overrides, the arm's, the proxy model's, then its storage."""
        storage_overrides = [f"storage.root={self.output_root}", "storage.layout=by_config"]
        overrides = [*self.base_overrides, *self.arms[arm].overrides, *self.train_overrides, *storage_overrides]
        return load_config(self.base_config, overrides)

    def train_config(self, arm: str, seed: int) -> TrainConfig:
        """The proxy run of one arm and seed: the arm's shards, `token_budget` tokens, `curve_points` checkpoints
        kept for scoring, under `<root>/runs/<arm>-<corpus hash>/seed-<seed>`."""
        cfg = self.arm_config(arm)
        base = training_config(cfg)
        steps = max(1, math.ceil(self.token_budget / base.tokens_per_step))
        every = max(1, steps // self.curve_points)
        corpus = CorpusPipeline(cfg).config_hash("tokenize")[:16]
        return base.updated(
            seed=seed,
            max_steps=steps,
            warmup_steps=min(base.optimizer.warmup_steps, steps // 10),
            checkpoint_every=every,
            eval_every=every,
            keep_last_checkpoints=self.curve_points + 1,
            output_url=storage.join(self.output_root, "runs", f"{arm}-{corpus}", f"seed-{seed}"),
        )


def load_ablation(path: str | Path) -> AblationSpec:
    """Read an ablation YAML (any local path); a bad file is a ConfigError naming the key."""
    try:
        raw: Any = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise ConfigError(f"cannot read ablation file {path}: {error}") from None
    try:
        return AblationSpec.model_validate(raw or {})
    except ValidationError as error:
        raise ConfigError(format_validation_error(error, f"ablation file {path}", AblationSpec)) from None
