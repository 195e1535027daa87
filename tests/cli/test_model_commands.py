from __future__ import annotations

import json
from pathlib import Path

import pytest

from pretrain_cli.main import main
from pretrain_core import storage
from tests.evaluate import conftest as evaluate_fixtures

token_data = evaluate_fixtures.token_data
trained_output = evaluate_fixtures.trained_output
fresh_run = evaluate_fixtures.fresh_run


def test_every_model_command_explains_itself(capsys: pytest.CaptureFixture[str]) -> None:
    for command, words in {
        "generate": ("--top-p", "--repetition-penalty", "--beams", "temperature 0 is greedy"),
        "evaluate": ("--max-new-tokens", "--reevaluate", "bits per byte"),
        "export": ("safetensors", "int8", "--dtype"),
        "serve": ("127.0.0.1", "--concurrency", "/generate"),
    }.items():
        with pytest.raises(SystemExit) as exit_info:
            main([command, "--help"])
        assert exit_info.value.code == 0
        out = " ".join(capsys.readouterr().out.split())
        assert all(word in out for word in words), command


def test_evaluate_runs_the_task_code_with_flags_over_a_yaml_config(
    fresh_run: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = storage.join(str(tmp_path), "eval.yaml")
    storage.write_bytes(config, b"batches_per_split: 1\nbatch_size: 4\nprompts: ['Copyright']\nnum_threads: 1\n")
    assert main(["evaluate", fresh_run, "--config", config, "--max-new-tokens", "5"]) == 0
    captured = capsys.readouterr()
    printed = json.loads(captured.out)
    assert printed["splits"]["validation"]["overall"]["sequences"] == 4
    assert [s["prompt"] for s in printed["samples"]] == ["Copyright", "Copyright"]
    # progress by part, then a summary a person reads, on stderr
    assert "validation split" in captured.err and "samples" in captured.err
    perplexity = printed["splits"]["validation"]["overall"]["perplexity"]
    assert f"validation perplexity all={perplexity:.1f}" in captured.err
    assert f"recorded: {printed['checkpoint_url']}/eval.json" in captured.err
    assert main(["evaluate", fresh_run, "--config", config, "--max-new-tokens", "5"]) == 0
    assert "an earlier evaluation's record" in capsys.readouterr().err


def test_generate_streams_text_and_exports_token_probabilities(
    trained_output: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["generate", trained_output, "--prompt", "Licensed under", "--max-new-tokens", "6", "--threads", "1"]
    assert main([*args, "--temperature", "0"]) == 0
    printed = capsys.readouterr()
    assert printed.out.startswith("Licensed under") and "tokens/s" in printed.err
    assert main([*args, "--strategy", "greedy", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert printed.out.rstrip("\n") == "Licensed under" + record["text"]  # temperature 0 is greedy
    assert len(record["ids"]) == len(record["tokens"]) == len(record["token_logprobs"]) <= 6
    assert all(lp <= 0 for lp in record["token_logprobs"]) and record["step"] == 30


def test_export_then_generate_from_the_export(
    trained_output: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = str(tmp_path / "export")
    assert main(["export", trained_output, "--format", "safetensors", "--output", output]) == 0
    assert json.loads(capsys.readouterr().out)["max_abs_logit_diff"] == 0.0
    args = ["--prompt", "Licensed under", "--max-new-tokens", "6", "--strategy", "beam", "--json", "--threads", "1"]
    assert main(["generate", output, *args]) == 0
    from_export = json.loads(capsys.readouterr().out)
    assert main(["generate", trained_output, *args]) == 0
    assert json.loads(capsys.readouterr().out)["ids"] == from_export["ids"]


def test_a_missing_model_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["generate", str(tmp_path / "nothing"), "--prompt", "x"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("pretrain: ") and "\n" not in err
