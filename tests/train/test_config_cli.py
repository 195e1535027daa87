from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from pretrain_core.train.config import TrainConfig
from pretrain_core.train.launch.flags import add_config_flags, config_from_args, read_config_file


def _parse(argv: list[str]) -> TrainConfig:
    parser = argparse.ArgumentParser()
    add_config_flags(parser, TrainConfig)
    return config_from_args(TrainConfig, parser.parse_args(argv))


def test_flags_are_json_except_for_text_fields() -> None:
    config = _parse(["--max-steps", "7", "--betas", "[0.9, 0.95]", "--model", "null", "--n-layer", "2",
                     "--n-head", "2", "--d-model", "32", "--tokens-url", "123", "--rdzv-id", "null"])  # fmt: skip
    assert config.max_steps == 7 and config.optimizer.betas == (0.9, 0.95) and config.model.preset is None
    assert config.data.tokens_url == "123"  # a URL that looks like a number is still a URL
    assert config.launch.rdzv_id is None


def test_file_then_flags(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"max_steps": 9, "lr": 0.01}))
    config = _parse(["--config", str(path), "--lr", "0.02"])
    assert (config.max_steps, config.optimizer.lr) == (9, 0.02)


def test_unknown_keys_in_the_file_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("max_step: 9\n")
    with pytest.raises(ValidationError, match="max_step"):
        _parse(["--config", str(path)])


def test_a_file_that_is_not_a_mapping_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("- 1\n- 2\n")
    with pytest.raises(ValueError, match="mapping"):
        read_config_file(str(path))
