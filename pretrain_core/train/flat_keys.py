"""The train config's old flat keys (`train.lr`, `train.tensor_parallel`, one model of 85 fields until the config
sections): still read for a release, each moved into its section with a one-line deprecation naming the new key.

`into_sections` moves them in a mapping (the config's own validator calls it); `migrate_file_config` rewrites a
whole pipeline or train config file's worth, which `pretrain config migrate` prints.
"""

from __future__ import annotations

import logging
from typing import Any

from pretrain_core.config_base import StrictModel
from pretrain_core.train.sections.checkpoint import CheckpointConfig
from pretrain_core.train.sections.compute import ComputeConfig
from pretrain_core.train.sections.data import DataConfig
from pretrain_core.train.sections.launch import LaunchConfig
from pretrain_core.train.sections.model import ModelConfig
from pretrain_core.train.sections.monitor import MonitorConfig
from pretrain_core.train.sections.optimizer import OptimizerConfig
from pretrain_core.train.sections.parallelism import ParallelismConfig

log = logging.getLogger(__name__)

# Each section's fields kept the flat names they had, except the preset: `model` became `model.preset`.
SECTIONS: dict[str, type[StrictModel]] = {
    "model": ModelConfig, "optimizer": OptimizerConfig, "compute": ComputeConfig, "parallelism": ParallelismConfig,
    "checkpoint": CheckpointConfig, "monitor": MonitorConfig, "data": DataConfig, "launch": LaunchConfig,
}  # fmt: skip
# Every flat key and where it lives now, as (section, field).
FLAT_KEYS: dict[str, tuple[str, str]] = {
    name: (section, name) for section, model in SECTIONS.items() for name in model.model_fields if name != "preset"
}
_PRESET = "model"  # the flat key whose value was the model preset (a name, not a section)
_warned: set[str] = set()


def new_key(flat: str) -> str:
    """Where a flat key lives now, as a dotted path under `train` (the run's own `max_steps`, `seed` and
    `output_url` stay where they were)."""
    if flat == _PRESET:
        return "model.preset"
    if flat not in FLAT_KEYS:
        return flat
    section, name = FLAT_KEYS[flat]
    return f"{section}.{name}"


def _warn_once(flat: str) -> None:
    if flat not in _warned:
        _warned.add(flat)
        log.warning(
            "train.%s is deprecated: use train.%s (`pretrain config migrate FILE` rewrites a config file)",
            flat, new_key(flat),
        )  # fmt: skip


def into_sections(values: dict[str, Any], warn: bool = True) -> dict[str, Any]:
    """``values`` with every flat key moved into its section (a flat key wins over the same setting already in
    its section: it was given later, on the command line or a form); sections given as models are kept whole."""
    flat = [key for key in values if key in FLAT_KEYS or (key == _PRESET and not _is_section(values[key]))]
    flat.sort(key=lambda key: key != _PRESET)  # the preset first: the model section takes its place
    if not flat:
        return values
    out = dict(values)
    for key in flat:
        if warn:
            _warn_once(key)
        value = out.pop(key)
        section, name = ("model", "preset") if key == _PRESET else FLAT_KEYS[key]
        holder = out.get(section, {})
        holder = dict(holder) if isinstance(holder, dict) else holder.model_dump()
        holder[name] = value
        out[section] = holder
    return out


def _is_section(value: Any) -> bool:
    return isinstance(value, dict) or hasattr(value, "model_dump")


def migrate_file_config(raw: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A pipeline config file's mapping (with a `train:` section) or a bare train config's, with the flat keys moved;
    and one line per key moved, `train.lr -> train.optimizer.lr`."""
    is_pipeline = isinstance(raw.get("train"), dict)
    train = raw["train"] if is_pipeline else raw
    moved = [
        f"train.{key} -> train.{new_key(key)}"
        for key in train
        if key in FLAT_KEYS or (key == _PRESET and not _is_section(train[key]))
    ]
    migrated = into_sections(train, warn=False)
    return ({**raw, "train": migrated} if is_pipeline else migrated), moved
