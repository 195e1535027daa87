"""The pipeline config: one YAML file, validated into strict models, with dotted command-line overrides.

Each stage owns its config model next to its code; this module only composes them. Unknown keys and
out-of-range values are refused with the dotted path of the offending key.
"""

from __future__ import annotations

import copy
import difflib
import functools
import hashlib
import json
import math
import os
import re
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from pretrain_core.clean.config import CleanConfig
from pretrain_core.cluster_tls import DaskTlsConfig, is_local
from pretrain_core.config_base import ConfigError, StrictModel, repeated
from pretrain_core.cores import usable_cores
from pretrain_core.decontam.config import DecontamConfig
from pretrain_core.dedup.config import DedupConfig
from pretrain_core.ingest.config import IngestConfig, SourceConfig
from pretrain_core.limits import MAX_CORPUS_BYTES
from pretrain_core.mixture.config import MixtureConfig
from pretrain_core.pii.config import PiiConfig
from pretrain_core.quality.config import QualityConfig
from pretrain_core.tokenize.config import PackConfig, TokenizerConfig
from pretrain_core.train.config import EvalConfig, TrainConfig

# Package data, installed as files: the demo config names its corpus (pretrain_core/data/demo) relative to itself.
DEFAULT_CONFIG = Path(str(resources.files("pretrain_core").joinpath("defaults", "demo.yaml")))


class StorageConfig(StrictModel):
    root: str = Field(
        default="outputs/demo",
        description="fsspec URL under which every stage writes (a local path, file://, s3://bucket/prefix, ...).",
    )
    endpoint_url: str | None = Field(
        default=None,
        description="S3-compatible endpoint (MinIO, moto, Ceph). Credentials come from the usual AWS environment.",
    )
    create_bucket: bool = Field(
        default=False,
        description="Create the bucket of an object-store root that does not exist. Off: a missing (say, mistyped) "
        "bucket is refused before any stage runs.",
    )
    layout: Literal["flat", "by_config"] = Field(
        default="flat",
        description="flat: each stage writes <root>/corpus/<stage>/ (a changed config redoes what it changes, in "
        "place). by_config: <root>/corpus/<stage>-<hash>/, keyed by the stage's chained config hash, so configs that "
        "differ only downstream share their upstream outputs and none overwrites another's (pretrain ablate).",
    )


# Below this much source data, threads: `pretrain stage` starts its workers for every stage, which took 21.7 s
# against threads' 12.1 on 2.4 MB, and the flow's workers, never slower there, cost up to half again the CPU
# (docs/benchmarks.md, "Every core by default").
SMALL_CORPUS_BYTES = 16 * 2**20


class ExecutionConfig(StrictModel):
    dask_address: str | None = Field(
        default=None,
        description="Address of a running Dask scheduler (tls://host:8786, with dask_tls). Data stages map their "
        "shards over it.",
    )
    dask_tls: DaskTlsConfig | None = Field(
        default=None,
        description="Certificate files the Dask client presents (from `pretrain dask-certs`); needed for tls://.",
    )
    dask_insecure: bool = Field(
        default=False,
        description="Allow a plain tcp:// scheduler off this machine. Anyone who reaches such a scheduler runs code "
        "on every worker with its storage credentials: only on a network nobody else can reach.",
    )
    dask_local_workers: int = Field(
        default=0,
        ge=0,
        le=512,
        description="Start a throwaway Dask LocalCluster with this many workers (0 = run shards in threads).",
    )
    max_threads: int = Field(
        default=2,
        ge=1,
        le=256,
        description="Concurrent shard tasks in threads (no Dask, processes 0). Threads share one core: shard work "
        "holds Python's GIL.",
    )
    processes: Annotated[int, Field(ge=0, le=512)] | Literal["auto"] = Field(
        default="auto",
        description="Local worker processes for shard work, every core busy without Dask. auto: the cores this "
        "process may use (CPU affinity and cgroup quota), or threads when the sources total under "
        "small_corpus_bytes, where starting the workers costs more than they save; 0: threads "
        "(max_threads); N: N processes.",
    )
    small_corpus_bytes: int = Field(
        default=SMALL_CORPUS_BYTES,
        ge=0,
        le=MAX_CORPUS_BYTES,
        description="With processes auto, sources totalling fewer bytes (as stored: compressed files count "
        "compressed) run in threads.",
    )
    jobs_per_task: int = Field(
        default=0,
        ge=0,
        le=100_000,
        description="Jobs (shards, a fit's per-shard maps, reduce jobs) one orchestrator task runs. 0: about 4 tasks "
        "per worker and round (with worker processes Prefect spends about 0.2 CPU s on each task run); 1: a task per "
        "shard.",
    )

    @model_validator(mode="after")
    def _one_place(self) -> ExecutionConfig:
        if self.processes != "auto" and self.processes and (self.dask_address or self.dask_local_workers):
            raise ValueError("execution.processes runs shards here; it cannot be combined with a Dask cluster")
        address = self.dask_address
        if address and address.startswith("tls://") and self.dask_tls is None:
            raise ValueError("a tls:// scheduler needs execution.dask_tls (make the files with `pretrain dask-certs`)")
        if address and not address.startswith("tls://") and not is_local(address) and not self.dask_insecure:
            raise ValueError(
                f"{address} is a plain-TCP scheduler off this machine, where anyone who reaches it runs code on every "
                "worker: use tls:// with execution.dask_tls (infra/dask/start-cluster.sh), or set "
                "execution.dask_insecure=true on a network nobody else reaches"
            )
        return self

    def worker_processes(self, source_bytes: Callable[[], int]) -> int:
        """The worker processes shard work runs in (0: threads, or a Dask cluster's workers); `source_bytes` is
        asked only when auto has to size the pool by the sources."""
        if self.processes != "auto":
            return self.processes
        if self.dask_address or self.dask_local_workers:
            return 0
        cores = usable_cores()
        return cores if cores >= 2 and source_bytes() >= self.small_corpus_bytes else 0


class PipelineConfig(StrictModel):
    """A whole pipeline run: sources, every stage's settings, storage, training and evaluation."""

    name: str = Field(default="demo", pattern=r"^[a-z0-9][a-z0-9_-]*$", description="Run name, used in paths.")
    storage: StorageConfig = Field(default_factory=StorageConfig, description="Where outputs go.")
    execution: ExecutionConfig = Field(default_factory=ExecutionConfig, description="Where shard work runs.")
    sources: list[SourceConfig] = Field(min_length=1, description="Input sources, each with its domain.")
    ingest: IngestConfig = Field(default_factory=IngestConfig, description="Ingestion settings.")
    clean: CleanConfig = Field(default_factory=CleanConfig, description="Cleaning, language id, heuristics.")
    dedup: DedupConfig = Field(default_factory=DedupConfig, description="Exact and near-duplicate removal.")
    pii: PiiConfig = Field(default_factory=PiiConfig, description="PII detection and redaction.")
    quality: QualityConfig = Field(default_factory=QualityConfig, description="Perplexity-based quality.")
    decontaminate: DecontamConfig = Field(
        default_factory=DecontamConfig, description="Evaluation text kept out of the training split."
    )
    tokenizer: TokenizerConfig = Field(default_factory=TokenizerConfig, description="SentencePiece training.")
    mixture: MixtureConfig = Field(default_factory=MixtureConfig, description="Token-budget domain mixture.")
    pack: PackConfig = Field(default_factory=PackConfig, description="Splitting and packing into sequences.")
    train: TrainConfig = Field(default_factory=TrainConfig, description="Model training.")
    evaluate: EvalConfig = Field(default_factory=EvalConfig, description="Checkpoint evaluation.")

    @field_validator("sources")
    @classmethod
    def _unique_source_names(cls, sources: list[SourceConfig]) -> list[SourceConfig]:
        clashes = repeated([s.name for s in sources])
        if clashes:
            raise ValueError(f"source names must be unique, repeated: {clashes}")
        return sources

    @model_validator(mode="after")
    def _licences_stated(self) -> PipelineConfig:
        """Under ``ingest.licences.unknown: refuse`` a source with no licence would only be dropped whole: say so."""
        unstated = [s.name for s in self.sources if s.licence is None and s.licence_field is None]
        if unstated and self.ingest.licences.unknown == "refuse":
            raise ValueError(
                f"sources {', '.join(unstated)} state no licence and ingest.licences.unknown is refuse: give each a "
                "licence (an SPDX expression) or a licence_field"
            )
        return self

    def hash(self) -> str:
        """Hash of the resolved config, recorded with every output."""
        payload = json.dumps(self.model_dump(mode="json"), sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


def apply_overrides(raw: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply `a.b.c=value` overrides; values are parsed as YAML (`3`, `true`, `[1, 2]`, `null`)."""
    out = copy.deepcopy(raw)
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"override {item!r} is not of the form dotted.key=value")
        node = out
        parts = key.strip().split(".")
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ConfigError(f"override {item!r}: {part!r} is not a section")
            node = child
        try:
            node[parts[-1]] = _number_or_yaml(value)
        except yaml.YAMLError as exc:
            problem = getattr(exc, "problem", None) or "not valid YAML"
            raise ConfigError(f"override {item!r}: the value is not valid YAML ({problem})") from None
    return out


# YAML 1.1 (PyYAML) reads 1e32 and 2e5 as strings (a float there needs a dot): on the command line they mean numbers.
_EXPONENT_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+")


def _number_or_yaml(value: str) -> Any:
    """An override's value: a number in exponent notation as a float, anything else as YAML parses it."""
    if _EXPONENT_NUMBER.fullmatch(value.strip()):
        return float(value)
    return yaml.safe_load(value)


def _resolve_source_paths(sources: Any, base_dir: Path) -> None:
    """Relative local source paths are relative to the file that lists them (config or sources file); so are
    evaluation set paths."""
    for source in sources if isinstance(sources, list) else []:
        path = source.get("path") if isinstance(source, dict) else None
        if isinstance(path, str) and "://" not in path and not Path(path).is_absolute():
            source["path"] = os.path.normpath(base_dir / path)


def format_validation_error(
    error: ValidationError, what: str = "pipeline config", model: type[BaseModel] | None = None
) -> str:
    """One line per refused setting, under a heading naming ``what`` was refused (a pipeline config, a sweep
    file); ``model`` is what was validated (default: the pipeline config), whose fields name accepted ranges."""
    lines = []
    for item in error.errors():
        key = ".".join(str(p) for p in item["loc"]) or "<root>"
        message = item["msg"]
        if item["type"] == "extra_forbidden":
            message = "unknown key" + _nearest_keys(key)
        elif item["type"] == "finite_number":
            shown = "NaN" if math.isnan(float(item["input"])) else "infinity"
            message = f"{shown} is refused: give a finite number"
        given = item.get("input")
        if item["type"] != "extra_forbidden" and not isinstance(given, dict | list):
            message += f" (given: {given!r}{_accepted(item['loc'], model or PipelineConfig)})"
        lines.append(f"  {key}: {message}")
    return f"invalid {what}:\n" + "\n".join(lines)


def _accepted(loc: tuple[int | str, ...], root: type[BaseModel]) -> str:
    """ "; accepted: ..." for the number at ``loc``: its kind and bounds, as its field declares them ('' for other
    settings and for locations that name no field of a section, such as an item of a list)."""
    model: Any = root
    field = None
    for part in loc:
        fields = getattr(model, "model_fields", None)
        if not isinstance(part, str) or fields is None or part not in fields:
            return ""
        field = fields[part]
        model = field.annotation
    if field is None or field.annotation not in (int, float):
        return ""  # pydantic's own message lists a choice's values; other types have no bounds to name
    bounds = [f"{op} {getattr(m, name)}" for m in field.metadata for name, op in _BOUNDS if hasattr(m, name)]
    return f"; accepted: {'an integer' if field.annotation is int else 'a number'}" + (
        f" {' and '.join(bounds)}" if bounds else ""
    )


_BOUNDS = (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<"))


def _nearest_keys(key: str) -> str:
    """The default config's keys a mistyped one most likely meant: those with the same last part ("clean.min_words"
    for "clean.prose.default.min_words"), else the closest spellings."""
    known = _default_keys()
    leaf = key.rsplit(".", 1)[-1]
    near = [k for k in known if k.rsplit(".", 1)[-1] == leaf][:3] or difflib.get_close_matches(
        key, known, n=3, cutoff=0.8
    )
    return f" (did you mean {', '.join(near)}?)" if near else ""


@functools.cache
def _default_keys() -> list[str]:
    """Every dotted key of the embedded default config (sections and settings), read once per process."""
    return list(_dotted_keys(load_config().model_dump(mode="json")))


def _dotted_keys(value: Any, prefix: str = "") -> Iterator[str]:
    if isinstance(value, dict):
        for name, child in value.items():
            path = f"{prefix}.{name}" if prefix else str(name)
            yield path
            yield from _dotted_keys(child, path)


def _read_yaml(path: Path, what: str) -> Any:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{what} not found: {path}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{what} {path} is not valid YAML: {exc}") from None


def load_config(path: str | Path | None = None, overrides: list[str] | None = None) -> PipelineConfig:
    """Load a YAML config (the embedded demo default when `path` is None) and apply dotted overrides."""
    source = Path(path) if path else DEFAULT_CONFIG
    raw = _read_yaml(source, "config file") or {}
    if not isinstance(raw, dict):
        raise ConfigError(f"config file {source} must hold a mapping at the top level")
    raw = apply_overrides(raw, overrides or [])
    listed_in = source.parent
    sources_file = raw.pop("sources_file", None)
    if sources_file is not None:
        if "sources" in raw:
            raise ConfigError(
                "both sources and sources_file are set: give one (--set sources_file=null to use the sources given)"
            )
        listed = source.parent / str(sources_file)
        raw["sources"] = _read_yaml(listed, "sources file")
        listed_in = listed.parent
    _resolve_source_paths(raw.get("sources"), listed_in)
    decontaminate = raw.get("decontaminate")
    if isinstance(decontaminate, dict):
        _resolve_source_paths(decontaminate.get("eval_sets"), source.parent)
    try:
        return PipelineConfig.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc)) from None
