"""Command-line flags generated from a config model: `--config file.{json,yaml}` plus one flag per field, a
section's fields as `--section.field` (`--optimizer.lr`), and hidden ones for the given old names.

Flags override the file; values are parsed as JSON when they can be (`--optimizer.betas [0.9,0.95]`,
`--max-steps 100`) and taken as strings otherwise, then validated by the model, so the CLI and the config class
never drift.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel
from pydantic.fields import FieldInfo

ModelT = TypeVar("ModelT", bound=BaseModel)


def _fields(model: type[BaseModel], prefix: str = "") -> Iterator[tuple[str, FieldInfo]]:
    """(dotted name, field) of every setting, a section's fields under the section's name."""
    for name, info in model.model_fields.items():
        if isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel):
            yield from _fields(info.annotation, f"{prefix}{name}.")
        else:
            yield f"{prefix}{name}", info


def add_config_flags(parser: argparse.ArgumentParser, model: type[BaseModel]) -> None:
    """A flag per setting, and a hidden one per old name the model still reads (its `renamed`: old -> new)."""
    parser.add_argument("--config", help="JSON or YAML file (any URL) with config fields; flags override it.")
    for name, info in _fields(model):
        default = json.dumps(info.get_default(call_default_factory=True), ensure_ascii=False)
        parser.add_argument(
            f"--{name.replace('_', '-')}",
            dest=name,
            default=argparse.SUPPRESS,
            metavar="VALUE",
            help=f"{info.description} (default: {default})".replace("%", "%%"),  # argparse formats help with %
        )
    for name in getattr(model, "renamed", {}):
        parser.add_argument(f"--{name.replace('_', '-')}", dest=name, default=argparse.SUPPRESS, help=argparse.SUPPRESS)


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
    given = vars(args)
    for name, info in _fields(model):
        if name in given:
            *sections, leaf = name.split(".")
            holder = values
            for section in sections:
                holder = holder.setdefault(section, {})
            holder[leaf] = _parse_value(given[name], info.annotation)
    fields = dict(_fields(model))
    for old, new in getattr(model, "renamed", {}).items():  # the model moves them into their sections, and warns
        if old in given:
            values[old] = _parse_value(given[old], fields[new].annotation)
    return model.model_validate(values)
