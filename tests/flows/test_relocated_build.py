"""A finished build moves: its root copied elsewhere (the original deleted) and its sources copied too, every command
that reads a build works on the copy from another directory, with no stage work."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
import yaml

from flows.pipeline import pretrain_pipeline
from pretrain_cli.main import main
from pretrain_core.config import load_config
from pretrain_core.pipeline import CorpusPipeline
from pretrain_core.train.checkpoint.catalog import read_meta


def _corpus_snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns) for p in root.rglob("*") if p.is_file()}


def _moved_sources(config_file: Path, folder: Path) -> Path:
    """The config with every source's files copied under ``folder`` and its paths pointing there."""
    raw = yaml.safe_load(config_file.read_text(encoding="utf-8"))
    for source in raw["sources"]:
        original = Path(source["path"])
        target = folder / source["name"] / original.name
        if original.is_dir():
            shutil.copytree(original, target)
        else:
            target.parent.mkdir(parents=True)
            shutil.copy2(original, target)
        source["path"] = str(target)
    moved = folder / "moved.yaml"
    moved.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    return moved


@pytest.mark.slow
@pytest.mark.usefixtures("prefect_harness")
def test_a_copied_build_serves_card_evaluate_generate_and_train_from_elsewhere(
    small_config_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pretrain_pipeline(str(small_config_file))
    original = small_config_file.parent / "run"
    copy = tmp_path / "synced" / "run"
    shutil.copytree(original, copy)
    config = str(_moved_sources(small_config_file, tmp_path / "sources"))
    shutil.rmtree(original)  # nothing may fall back to the build where it was written
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    at_copy = ["--config", config, "--set", f"storage.root={copy}"]
    before = _corpus_snapshot(copy / "corpus")
    moved = CorpusPipeline(load_config(config, [f"storage.root={copy}"]))
    assert all(moved.finished(name) is not None for name in moved.registry.names)  # same hashes, outputs found
    runs = sorted((copy / "train").iterdir())
    assert len(runs) == 1

    assert main(["card", *at_copy]) == 0
    assert (copy / "card" / "card.html").exists()

    capsys.readouterr()
    assert main(["evaluate", str(copy / "train"), "--reevaluate", "--batches-per-split", "1"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["tokens_url"] == str(copy / "corpus" / "tokenize") and result["step"] == 12

    assert main(["generate", str(copy / "train"), "--prompt", "The", "--max-new-tokens", "4", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["step"] == 12

    assert main(["train", *at_copy, "--set", "train.max_steps=14", "--set", "train.checkpoint_every=7"]) == 0
    assert sorted((copy / "train").iterdir()) == runs  # resumed its own run, not a new corpus hash
    assert (runs[0] / "checkpoints" / "step-00000014").is_dir()
    assert _corpus_snapshot(copy / "corpus") == before, "a moved build must be read, not rebuilt"

    capsys.readouterr()  # the resumed run's bill names the copy's build and card, and every token it was fed
    assert main(["card", "--model", str(copy / "train")]) == 0
    printed = capsys.readouterr().out
    meta = read_meta(str(runs[0] / "checkpoints" / "step-00000014"))
    assert meta["data"]["bill"]["tokens"] == meta["tokens_seen"] and f"{meta['tokens_seen']:,} tokens fed" in printed
    assert meta["corpus"]["stages"] == [[name, moved.config_hash(name)] for name in moved.registry.names]
    assert "Corpus build" in printed and f"tokenize `{moved.config_hash('tokenize')}`" in printed
    assert meta["corpus"]["card_sha256"] == hashlib.sha256((copy / "card" / "card.json").read_bytes()).hexdigest()
