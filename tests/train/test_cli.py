from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from pretrain_core import storage
from pretrain_core.train.checkpoint.catalog import completed_checkpoints
from pretrain_core.train.config import TrainConfig
from pretrain_core.train.launch.cli import EXIT_STOPPED, main


def test_help_lists_every_config_field(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert all(f"--{name.replace('_', '-')}" in out for name in TrainConfig.model_fields)


def test_flags_override_the_config_file(tiny_config: Callable[..., TrainConfig], tmp_path: Path) -> None:
    config = tiny_config(max_steps=50)
    path = tmp_path / "train.yaml"
    path.write_text(yaml.safe_dump(config.model_dump(mode="json")))
    assert main(["--config", str(path), "--max-steps", "2", "--betas", "[0.9, 0.95]"]) == 0
    summary = storage.read_json(storage.join(config.output_url, "train_summary.json"))
    assert summary["steps"] == 2 and summary["status"] == "completed"


def test_sigterm_saves_a_checkpoint_and_exits_with_143(tiny_config: Callable[..., TrainConfig], tmp_path: Path) -> None:
    config = tiny_config(max_steps=100_000, checkpoint_every=5, eval_every=100_000)
    path = tmp_path / "train.json"
    storage.write_json(str(path), config.model_dump(mode="json"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "pretrain_core.train", "--config", str(path)],
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not completed_checkpoints(config.output_url) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == EXIT_STOPPED, stderr
    summary = storage.read_json(storage.join(config.output_url, "train_summary.json"))
    assert summary["status"] == "stopped" and 5 <= summary["steps"] < 100_000
    assert completed_checkpoints(config.output_url)[-1][0] == summary["steps"]  # saved where it stopped
