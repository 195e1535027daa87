"""Command-line flags generated from a config model: `--config file.{json,yaml}` plus one flag per field.

Flags override the file; values are parsed as JSON when they can be (`--betas [0.9,0.95]`, `--max-steps 100`)
and taken as strings otherwise, then validated by the model, so the CLI and the config class never drift.
"""

from __future__ import annotations

import argparse
import json
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel

ModelT = TypeVar("ModelT", bound=BaseModel)


def add_config_flags(parser: argparse.ArgumentParser, model: type[BaseModel]) -> None:
    parser.add_argument("--config", help="JSON or YAML file (any URL) with config fields; flags override it.")
    for name, info in model.model_fields.items():
        default = json.dumps(info.get_default(call_default_factory=True), ensure_ascii=False)
        parser.add_argument(
            f"--{name.replace('_', '-')}",
            dest=name,
            default=argparse.SUPPRESS,
            metavar="VALUE",
            help=f"{info.description} (default: {default})".replace("%", "%%"),  # argparse formats help with %
        )


def read_config_file(url: str) -> dict[str, Any]:
    from pretrain_core import storage  # fsspec only when a file is read: `--help` builds these flags too

    text = storage.read_bytes(url).decode()
    data = json.loads(text) if url.endswith(".json") else yaml.safe_load(text)
    if not isinstance(data, dict):
        raise ValueError(f"{url}: a config file must hold a mapping of field names to values")
    return data


def _parse_value(raw: str, annotation: Any) -> Any:
    """Text fields take the value as is (a URL like `123` must not become a number), `null` clearing an optional
    one; other fields parse it as JSON, falling back to the string for pydantic to judge."""
    if annotation is str:
        return raw
    if annotation == str | None:
        return None if raw == "null" else raw
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def config_from_args(model: type[ModelT], args: argparse.Namespace) -> ModelT:
    values = read_config_file(args.config) if getattr(args, "config", None) else {}
    for name, info in model.model_fields.items():
        if hasattr(args, name):
            values[name] = _parse_value(getattr(args, name), info.annotation)
    return model.model_validate(values)
