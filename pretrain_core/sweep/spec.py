"""A sweep's search space and budgets, loaded from YAML (`pretrain sweep --space SWEEP.yaml`).

Every trial trains the same proxy model on the same corpus for the same number of tokens, with the searched
training settings set from the trial's sample; its final validation loss is the objective, its intermediate ones
feed the pruner. Trials write under `<output_root>/<name>/trials/<hash of the settings>`, so a trial killed and
asked again with the same settings resumes its run.
"""

from __future__ import annotations

import hashlib
import json
import math
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import Field, ValidationError, model_validator

from pretrain_core import storage
from pretrain_core.config import ConfigError, PipelineConfig, format_validation_error, load_config
from pretrain_core.config_base import Seed, StrictModel
from pretrain_core.limits import MAX_CORPUS_TOKENS
from pretrain_core.pipeline import CorpusPipeline, training_config
from pretrain_core.train.config import TrainConfig
from pretrain_core.train.flat_keys import new_key

CPU_PRESET = Path(str(files("pretrain_core").joinpath("defaults", "sweep-cpu.yaml")))
# what a sweep may search: training fields, and AdamW's two betas by name
BETAS = ("beta1", "beta2")
SEARCHABLE = frozenset(
    {"lr", "warmup_steps", "weight_decay", "min_lr_ratio", "grad_clip", "micro_batch_size", "grad_accum_steps",
     "dropout", "lr_schedule", "eps", *BETAS}
)  # fmt: skip

Choice = float | int | str


class SearchParam(StrictModel):
    """One searched setting: a float or int range (log-uniform with `log`), or a list of choices."""

    kind: Literal["float", "int", "categorical"] = Field(description="float | int | categorical")
    low: float | None = Field(default=None, description="Range start (float, int).")
    high: float | None = Field(default=None, description="Range end, included (float, int).")
    log: bool = Field(default=False, description="Sample the range log-uniformly (learning rates).")
    choices: list[Choice] | None = Field(default=None, min_length=1, description="The values (categorical).")

    def holds(self, value: Choice) -> bool:
        if self.choices is not None:
            return value in self.choices
        assert self.low is not None and self.high is not None
        return isinstance(value, int | float) and self.low <= value <= self.high

    @model_validator(mode="after")
    def _complete(self) -> SearchParam:
        if self.kind == "categorical":
            if not self.choices:
                raise ValueError("a categorical parameter needs choices")
        elif self.low is None or self.high is None or self.low >= self.high:
            raise ValueError(f"a {self.kind} parameter needs low < high")
        elif self.log and self.low <= 0:
            raise ValueError("a log range needs low > 0")
        return self


class TransferTarget(StrictModel):
    """A wider model to carry the best setting to under µP (the proxy must train with parametrization mup)."""

    d_model: int = Field(ge=16, le=16384, description="The target width.")
    n_head: int = Field(ge=1, le=128, description="The target's attention heads.")
    n_layer: int | None = Field(default=None, ge=1, le=128, description="The target's depth (default: the proxy's).")


class SweepSpec(StrictModel):
    """A sweep: the corpus and proxy model, the search space, the trial budget and pruning."""

    name: str = Field(default="sweep", pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$", description="Names the study.")
    output_root: str = Field(default="outputs/sweep", description="Where the corpus, trials and report go (URL).")
    study_url: str | None = Field(
        default=None,
        description="Optuna storage (any SQLAlchemy URL, e.g. postgresql://...). Unset: a SQLite file "
        "<output_root>/<name>/study.db, which needs a local output_root.",
    )
    base_config: str | None = Field(default=None, description="Pipeline YAML (default: the embedded demo config).")
    base_overrides: list[str] = Field(default=[], description="Overrides of the corpus and proxy model (KEY=VALUE).")
    trials: int = Field(default=12, ge=1, le=10_000, description="Trials to finish (complete or pruned) in all.")
    seed: Seed = Field(default=0, description="Seed of the sampler (TPE); the proxy's training seed stays fixed.")
    token_budget: int | None = Field(
        default=None, ge=1, le=MAX_CORPUS_TOKENS, description="Tokens per trial (default: the base config's run)."
    )
    evaluations: int = Field(
        default=4, ge=1, le=1000, description="Validation losses per trial: what the pruner compares."
    )
    pruner: Literal["median", "hyperband", "none"] = Field(
        default="median",
        description="median: stop a trial whose validation loss is worse than the median of earlier trials at "
        "the same step; hyperband: successive halving in brackets; none.",
    )
    include_base: bool = Field(
        default=True, description="Run the base config's own settings as the first trial: the number to beat."
    )
    space: dict[str, SearchParam] = Field(min_length=1, description="Searched setting → its range or choices.")
    transfer_to: TransferTarget | None = Field(
        default=None, description="Write the best setting carried to this width under µP (`transferred.yaml`)."
    )

    @model_validator(mode="after")
    def _searchable(self) -> SweepSpec:
        unknown = sorted(set(self.space) - SEARCHABLE)
        if unknown:
            raise ValueError(f"cannot search {unknown}: searchable are {sorted(SEARCHABLE)}")
        if self.transfer_to is not None and self.base_train().model.parametrization != "mup":
            raise ValueError("transfer_to needs the proxy trained with train.model.parametrization=mup")
        if self.include_base:
            outside = [
                f"{name}={value}" for name, value in self.base_values().items() if not self.space[name].holds(value)
            ]
            if outside:
                raise ValueError(
                    f"the base settings {', '.join(outside)} lie outside the search space: widen it, or set "
                    "include_base: false"
                )
        return self

    @property
    def root(self) -> str:
        return storage.join(self.output_root, self.name)

    def pipeline_config(self) -> PipelineConfig:
        """The corpus and proxy model's config: the base config's own build when its root already holds one of
        these settings (`make demo`'s, say), else a build under the sweep's output root."""
        base = load_config(self.base_config, self.base_overrides)
        if CorpusPipeline(base).finished("tokenize") is not None:
            return base
        storage_overrides = [f"storage.root={self.output_root}", "storage.layout=by_config"]
        return load_config(self.base_config, [*self.base_overrides, *storage_overrides])

    def set_line(self, params: dict[str, Choice]) -> str:
        """`--set` overrides that train with ``params`` on the sweep's corpus and proxy model (`pretrain train`)."""
        betas = list(self.base_train().optimizer.betas)
        for name in BETAS:
            if name in params:
                betas[BETAS.index(name)] = float(params[name])
        settings = [f"train.{new_key(name)}={value}" for name, value in params.items() if name not in BETAS]
        if any(name in params for name in BETAS):
            settings.append(f"train.{new_key('betas')}=[{betas[0]},{betas[1]}]")
        return " ".join(f"--set {item}" for item in [*self.base_overrides, *settings])

    def base_train(self) -> TrainConfig:
        return training_config(self.pipeline_config())

    def base_values(self) -> dict[str, Choice]:
        """The base config's value of every searched setting (the first trial's, with include_base)."""
        base = self.base_train()
        return {
            name: base.optimizer.betas[BETAS.index(name)] if name in BETAS else base.setting(name)
            for name in self.space
        }

    def train_config(self, params: dict[str, Choice]) -> TrainConfig:
        """The trial's run: the base with ``params`` set, `token_budget` tokens, `evaluations` validation points,
        under `<root>/trials/<hash of params>` (a ValueError when the combination is not a valid config)."""
        base = self.base_train()
        settings = {name: value for name, value in params.items() if name not in BETAS}
        betas = list(base.optimizer.betas)
        for name in BETAS:
            if name in params:
                betas[BETAS.index(name)] = float(params[name])
        probe = base.updated(**settings, betas=tuple(betas))
        steps = probe.max_steps
        if self.token_budget is not None:
            steps = max(1, math.ceil(self.token_budget / probe.tokens_per_step))
        every = max(1, steps // self.evaluations)
        key = hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:12]
        return probe.updated(
            max_steps=steps,
            warmup_steps=min(probe.optimizer.warmup_steps, max(0, steps - 1)),
            eval_every=every,
            checkpoint_every=steps,
            checkpoint_every_minutes=None,
            keep_last_checkpoints=1,
            prune_waits_for_evaluation=False,
            output_url=storage.join(self.root, "trials", key),
        )


def load_sweep(path: str | Path, overrides: dict[str, Any] | None = None) -> SweepSpec:
    """Read a sweep YAML (any local path), with top-level ``overrides``; a bad file is a ConfigError naming the
    key."""
    try:
        raw: Any = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise ConfigError(f"cannot read sweep file {path}: {error}") from None
    try:
        return SweepSpec.model_validate({**(raw or {}), **(overrides or {})})
    except ValidationError as error:
        raise ConfigError(format_validation_error(error, f"sweep file {path}", SweepSpec)) from None
