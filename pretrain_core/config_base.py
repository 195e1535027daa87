"""Base class for every config model (unknown keys and wrong types are refused, never ignored), and the error a
stage raises when its settings cannot work on its input (the CLI prints it as one line)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

# Every seed: numpy's generators take 0 .. 2**32 - 1, so a larger one would be accepted here and fail mid-run.
Seed = Annotated[int, Field(ge=0, le=2**32 - 1)]


class StrictModel(BaseModel):
    """A frozen pydantic model that refuses unknown keys, so a typo in YAML is an error naming the key, and NaN or
    infinity for any number (a NaN compares false with every bound, so it would pass them or fail confusingly)."""

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True, allow_inf_nan=False)


def repeated(names: list[str]) -> list[str]:
    """The names given more than once, sorted: what a list of named things (sources, evaluation sets) refuses."""
    return sorted({name for name in names if names.count(name) > 1})


class ConfigError(ValueError):
    """A config that cannot be used, with every problem named by its dotted key."""
