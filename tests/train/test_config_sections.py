"""The train config in sections: old flat keys still read (with a one-line deprecation), files migrated, and a run
saved under the flat config (`data/flat-config-run`, made at fa690a4) resumed under the sections."""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pretrain_core import storage
from pretrain_core.config import DEFAULT_CONFIG, load_config
from pretrain_core.train import flat_keys
from pretrain_core.train.checkpoint.catalog import latest_checkpoint, read_meta, saved_setting
from pretrain_core.train.config import TrainConfig
from pretrain_core.train.flat_keys import FLAT_KEYS, migrate_file_config
from pretrain_core.train.trainer import train

FLAT_RUN = Path(__file__).parent / "data" / "flat-config-run"
MAX_TOP_LEVEL_FIELDS = 12


def test_the_config_is_a_handful_of_sections_each_holding_its_flat_keys() -> None:
    """Every field of the flat config a run saved at fa690a4 (all 85) lands in a section with its value."""
    assert len(TrainConfig.model_fields) <= MAX_TOP_LEVEL_FIELDS
    checkpoint = FLAT_RUN / "train" / "checkpoints" / "step-00000003" / "meta.json"
    flat = json.loads(checkpoint.read_text())["config"]
    assert len(flat) == 85 and "optimizer" not in flat
    config = TrainConfig.model_validate(flat)
    own = {"max_steps", "seed", "output_url"}
    assert {name: config.setting(name) for name in flat if name in FLAT_KEYS} == {
        name: tuple(value) if isinstance(value, list) and name == "betas" else value
        for name, value in flat.items()
        if name not in own | {"model"}
    }
    assert config.model.preset == flat["model"] and all(getattr(config, name) == flat[name] for name in own)


def test_flat_keys_still_configure_the_run_and_each_warns_once_naming_its_new_key(
    caplog: pytest.LogCaptureFixture,
) -> None:
    flat_keys._warned.clear()
    with caplog.at_level(logging.WARNING, logger="pretrain_core.train.flat_keys"):
        old = load_config(None, ["train.lr=0.01", "train.tensor_parallel=1", "train.model=small"]).train
        load_config(None, ["train.lr=0.02"])
    new = load_config(
        None, ["train.optimizer.lr=0.01", "train.parallelism.tensor_parallel=1", "train.model.preset=small"]
    ).train
    assert old == new and old.optimizer.lr == 0.01 and old.model.shape() == (6, 6, 384)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 3 and any(line.startswith("train.lr is deprecated: use train.optimizer.lr") for line in lines)
    assert any("train.model is deprecated: use train.model.preset" in line for line in lines)


def _demo_with(train: dict[str, object], path: Path) -> Path:
    """The embedded demo config with ``train`` as its train section, written to ``path``."""
    raw = yaml.safe_load(DEFAULT_CONFIG.read_text(encoding="utf-8"))
    sources = (DEFAULT_CONFIG.parent / raw["sources_file"]).resolve()  # the demo's, from wherever the copy lies
    path.write_text(yaml.safe_dump({**raw, "sources_file": str(sources), "train": train}))
    return path


def test_a_flat_key_given_later_wins_over_its_section_in_the_file(tmp_path: Path) -> None:
    path = _demo_with({"optimizer": {"lr": 0.001, "eps": 1e-6}}, tmp_path / "mixed.yaml")
    config = load_config(path, ["train.lr=0.005"]).train
    assert (config.optimizer.lr, config.optimizer.eps) == (0.005, 1e-6)


def test_pretrain_config_migrate_rewrites_a_flat_file_into_one_that_loads_the_same(tmp_path: Path) -> None:
    flat = {"model": "tiny", "lr": 0.002, "max_steps": 40, "strategy": "ddp", "tokens_url": "x/tok"}
    path = _demo_with(flat, tmp_path / "old.yaml")
    migrated, moved = migrate_file_config(yaml.safe_load(path.read_text()))
    assert "train.lr -> train.optimizer.lr" in moved and "train.model -> train.model.preset" in moved
    assert migrated["train"]["max_steps"] == 40 and migrated["train"]["data"] == {"tokens_url": "x/tok"}
    before = load_config(path).train
    done = subprocess.run(
        [sys.executable, "-m", "pretrain_cli", "config", "migrate", str(path), "--write"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "moved train.strategy -> train.parallelism.strategy" in done.stderr
    rewritten = yaml.safe_load(path.read_text())
    assert set(rewritten["train"]) == {"model", "optimizer", "max_steps", "parallelism", "data"}
    assert load_config(path).train == before
    again = subprocess.run(
        [sys.executable, "-m", "pretrain_cli", "config", "migrate", str(path)], capture_output=True, text=True
    )
    assert again.returncode == 0 and "nothing to migrate" in again.stderr


def test_a_run_saved_under_the_flat_config_resumes_under_the_sections(tmp_path: Path) -> None:
    build = tmp_path / "build"
    shutil.copytree(FLAT_RUN, build)
    checkpoint = latest_checkpoint(str(build / "train"))
    assert checkpoint is not None and checkpoint.endswith("step-00000003")
    saved = json.loads((Path(checkpoint) / "meta.json").read_text())["config"]
    assert "lr" in saved and "optimizer" not in saved  # really the flat layout
    meta = read_meta(checkpoint)  # relocated: it was written under another root
    assert saved_setting(meta, "tokens_url") == str(build / "tokens")
    uninterrupted = json.loads((build / "uninterrupted.json").read_text())
    config = TrainConfig.model_validate(
        {
            "model": {"preset": None, "n_layer": 2, "n_head": 2, "d_model": 32},
            "data": {"seq_len": saved["seq_len"], "micro_batch_size": 4, "grad_accum_steps": 2,
                     "tokens_url": str(build / "tokens"), "tokenizer_url": str(build / "tokenizer.model")},
            "optimizer": {"lr": 1e-2, "warmup_steps": 2},
            "monitor": {"eval_every": 2, "eval_batches": 2, "log_every": 1, "peak_flops_per_device": 1e11},
            "checkpoint": {"checkpoint_every": 2, "checkpoint_every_minutes": None},
            "launch": {"num_threads": 1},
            "max_steps": 4,
            "output_url": str(build / "train"),
        }
    )  # fmt: skip
    resumed = train(config)
    assert resumed.status == "completed" and sorted(resumed.losses) == [4]  # from step 3: only step 4 ran
    # the same run uninterrupted, on the machine that made the fixture: another BLAS kernel moves the last bits
    assert resumed.losses[4] == pytest.approx(uninterrupted["losses"]["4"], rel=1e-4)
    assert resumed.summary["final_validation_loss"] == pytest.approx(uninterrupted["final_validation_loss"], rel=1e-4)
    assert storage.exists(storage.join(str(build / "train"), "checkpoints", "step-00000004", "manifest.json"))
