from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import get_args, get_origin

import pytest
import yaml
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from pretrain_core.config import DEFAULT_CONFIG, ConfigError, PipelineConfig, apply_overrides, load_config


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "run.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_embedded_default_loads_the_demo_sources() -> None:
    cfg = load_config()
    assert {s.domain for s in cfg.sources} == {"general", "specialist", "code"}
    assert all(Path(s.path).exists() for s in cfg.sources)
    assert cfg.mixture.weights == {"general": 0.6, "specialist": 0.3, "code": 0.1}
    assert load_config().hash() == cfg.hash()


def test_unknown_key_is_refused_with_its_dotted_name(tmp_path: Path) -> None:
    text = DEFAULT_CONFIG.read_text(encoding="utf-8").replace("sources_file: ../data/demo/", "sources_file: ../")
    (tmp_path / "cfg").mkdir()
    (tmp_path / "sources.yaml").write_text(
        yaml.safe_dump([{"name": "a", "domain": "code", "format": "code", "path": "src"}]), encoding="utf-8"
    )
    with pytest.raises(ConfigError, match=r"dedup\.treshold: unknown key \(did you mean dedup\.threshold\?\)"):
        load_config(_write(tmp_path / "cfg", text + "dedup:\n  treshold: 0.7\n"))
    with pytest.raises(ConfigError, match="sources file not found"):
        load_config(_write(tmp_path, text))


def test_a_misplaced_key_is_pointed_to_where_it_lives() -> None:
    with pytest.raises(
        ConfigError, match=r"clean\.min_words: unknown key \(did you mean clean\.prose\.default\.min_words\?\)"
    ):
        load_config(overrides=["clean.min_words=5"])
    with pytest.raises(ConfigError, match=r"pii\.no_such_setting: unknown key$"):  # nothing close: no guess
        load_config(overrides=["pii.no_such_setting=1"])


def test_out_of_range_override_names_the_key() -> None:
    with pytest.raises(ConfigError, match=r"train\.optimizer\.lr"):
        load_config(overrides=["train.lr=-0.1"])


def test_mixture_weights_that_do_not_sum_to_one_are_refused() -> None:
    with pytest.raises(ConfigError, match=r"mixture\.weights"):
        load_config(overrides=["mixture.weights={general: 0.6, specialist: 0.3, code: 0.2}"])


def test_overrides_change_the_hash_and_parse_yaml_values() -> None:
    base = load_config()
    changed = load_config(overrides=["train.max_steps=7", "storage.root=s3://bucket/run"])
    assert changed.train.max_steps == 7 and changed.storage.root == "s3://bucket/run"
    assert changed.hash() != base.hash()
    assert apply_overrides({"a": {"b": 1}}, ["a.c=[1, 2]"]) == {"a": {"b": 1, "c": [1, 2]}}
    with pytest.raises(ConfigError, match=r"dotted\.key=value"):
        apply_overrides({}, ["novalue"])


def test_relative_source_paths_are_relative_to_the_config_file(tmp_path: Path) -> None:
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "a.jsonl").write_text('{"text": "hello"}\n', encoding="utf-8")
    path = _write(
        tmp_path,
        yaml.safe_dump({"sources": [{"name": "a", "domain": "general", "format": "jsonl", "path": "corpus/a.jsonl"}]}),
    )
    assert load_config(path).sources[0].path == str(tmp_path / "corpus" / "a.jsonl")


def test_missing_and_malformed_files_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.yaml")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(_write(tmp_path, "sources: [unclosed"))


def test_sources_given_beside_a_sources_file_are_refused_not_ignored() -> None:
    with pytest.raises(ConfigError, match="both sources and sources_file are set"):
        load_config(overrides=["sources=5"])
    with pytest.raises(ConfigError, match=r"sources: Input should be a valid list"):
        load_config(overrides=["sources=5", "sources_file=null"])


def _seed_keys(model: type[BaseModel], prefix: str = "") -> list[str]:
    """Dotted keys of every seed in the config, found by walking the models (so a new seed cannot be missed)."""
    keys = []
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            keys += _seed_keys(annotation, f"{prefix}{name}.")
        elif "seed" in name:
            keys.append(f"{prefix}{name}")
    return keys


def test_every_seed_numpy_cannot_use_is_refused_naming_its_key() -> None:
    keys = _seed_keys(PipelineConfig)
    assert {"train.seed", "dedup.seed", "tokenizer.seed"} <= set(keys) and len(keys) >= 6
    for key in keys:
        load_config(None, [f"{key}={2**32 - 1}"])
        with pytest.raises(ConfigError, match=rf"{re.escape(key)}: Input should be less than or equal to 4294967295"):
            load_config(None, [f"{key}={2**32}"])


@pytest.mark.parametrize("key", ["train.max_steps", "ingest.docs_per_shard", "ingest.preview_chars"])
def test_a_count_far_past_any_real_run_is_refused_when_read(key: str) -> None:
    with pytest.raises(ConfigError, match=rf"{re.escape(key)}: Input should be less than or equal to"):
        load_config(None, [f"{key}=1.0e+15"])


def test_every_count_and_size_has_an_upper_bound() -> None:
    """A bare `int` or `float` field would take 1e23 for 2000; `pretrain_core/limits.py` says why each bound."""
    unbounded = [key for key, field in _number_fields(PipelineConfig) if not _has_upper_bound(field)]
    assert unbounded == []


@pytest.mark.parametrize(
    ("value", "named"), [(".nan", "NaN"), ("nan", "NaN"), ("NaN", "NaN"), (".inf", "infinity"), ("-inf", "infinity")]
)
def test_nan_and_infinity_are_named_as_such(value: str, named: str) -> None:
    """YAML hands `nan` and `-inf` over as strings, `.nan` as a float: each is named for what it is."""
    with pytest.raises(ConfigError, match=rf"train\.optimizer\.lr: {named} is refused: give a finite number \(given: "):
        load_config(None, [f"train.lr={value}"])


def test_a_refused_number_says_what_was_given_and_what_is_accepted() -> None:
    with pytest.raises(ConfigError, match=r"train\.max_steps: .*\(given: 1e\+32; accepted: an integer >= 1 and <= "):
        load_config(None, ["train.max_steps=1e32"])
    with pytest.raises(ConfigError, match=r"dedup\.threshold: .*\(given: 2; accepted: a number > 0\.0 and < 1\.0\)"):
        load_config(None, ["dedup.threshold=2"])
    with pytest.raises(
        ConfigError, match=r"train\.parallelism\.strategy: Input should be 'ddp' or 'fsdp' \(given: 'zero'\)$"
    ):
        load_config(None, ["train.strategy=zero"])


def test_exponent_notation_on_the_command_line_is_a_number() -> None:
    """PyYAML reads 2e3 as a string (YAML 1.1 wants a dot); an override means the number."""
    config = load_config(None, ["train.max_steps=2e3", "train.lr=3E-4"])
    assert config.train.max_steps == 2000 and config.train.optimizer.lr == 3e-4


def test_warmup_longer_than_the_run_is_warned_about(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="pretrain_core.train.config"):
        load_config(None, ["train.max_steps=100", "train.warmup_steps=100"])
    assert "train.optimizer.warmup_steps 100 >= train.max_steps 100" in caplog.text


def _number_fields(model: type[BaseModel], prefix: str = "") -> list[tuple[str, FieldInfo]]:
    found = []
    for name, field in model.model_fields.items():
        kinds = [field.annotation, *get_args(field.annotation)]
        nested = [k for k in kinds if isinstance(k, type) and issubclass(k, BaseModel)]
        for inner in nested:
            found += _number_fields(inner, f"{prefix}{name}.")
        container = get_origin(field.annotation) in (dict, list, tuple)  # weights, betas: their validators bound them
        if not container and any(k in (int, float) for k in kinds):
            found.append((f"{prefix}{name}", field))
    return found


def _has_upper_bound(field: FieldInfo) -> bool:
    return any(
        getattr(meta, "le", None) is not None or getattr(meta, "lt", None) is not None for meta in field.metadata
    )
