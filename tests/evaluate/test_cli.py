from __future__ import annotations

import json

import pytest

from pretrain_core import storage
from pretrain_core.evaluate.cli import main


def test_help_names_the_checkpoint_and_every_eval_field(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "checkpoint" in out and "--max-new-tokens" in out and "--top-k" in out


def test_cli_evaluates_with_flags_over_a_yaml_config(
    trained_output: str, tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    config = storage.join(str(tmp_path), "eval.yaml")
    storage.write_bytes(config, b"batches_per_split: 1\nbatch_size: 4\nprompts: ['Copyright']\nnum_threads: 1\n")
    assert main([trained_output, "--config", config, "--max-new-tokens", "5"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["splits"]["validation"]["overall"]["sequences"] == 4
    assert [s["prompt"] for s in printed["samples"]] == ["Copyright", "Copyright"]
