"""`pretrain config migrate FILE`: a config file written for the flat train config, rewritten into its sections."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from pretrain_core.config import ConfigError
from pretrain_core.train.flat_keys import migrate_file_config


def migrate_config_file(file: str | None, write: bool) -> int:
    """Print the migrated YAML (or rewrite ``file`` with ``write``); each moved key is named on stderr."""
    if file is None:
        raise ConfigError("pretrain config migrate needs the FILE to migrate")
    path = Path(file)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {path} is not valid YAML: {exc}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"config file {path} must hold a mapping at the top level")
    migrated, moved = migrate_file_config(raw)
    text = yaml.safe_dump(migrated, sort_keys=False, allow_unicode=True)
    for line in moved:
        print(f"moved {line}", file=sys.stderr)
    if not moved:
        print(f"{path}: nothing to migrate", file=sys.stderr)
    if write and moved:
        path.write_text(text, encoding="utf-8")
        print(f"rewrote {path}", file=sys.stderr)
    elif not write:
        print(text, end="")
    return 0
