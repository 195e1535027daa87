"""`pretrain card --model`: a checkpoint's bill of materials, the tokens it was fed by domain, source and licence."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pretrain_cli.main import main
from pretrain_core.train.checkpoint.catalog import read_meta, resolve_checkpoint
from tests.evaluate import conftest as evaluate_fixtures

token_data = evaluate_fixtures.token_data
trained_output = evaluate_fixtures.trained_output
FLAT_RUN = Path(__file__).resolve().parent.parent / "train" / "data" / "flat-config-run"


def test_the_bill_of_a_training_output_is_its_latest_checkpoints(
    trained_output: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["card", "--model", trained_output]) == 0
    printed = capsys.readouterr().out
    checkpoint = resolve_checkpoint(trained_output)
    meta = read_meta(checkpoint)
    bill = meta["data"]["bill"]
    assert printed.startswith(f"# Bill of materials: {checkpoint} (step 30)")
    assert f"{meta['tokens_seen']:,} tokens fed in {bill['sequences']:,} sequences." in printed
    assert sum(bill["by"]["source"].values()) == bill["tokens"] == meta["tokens_seen"]
    for source, tokens in bill["by"]["source"].items():
        assert f"| {source} | {tokens:,} |" in printed
    assert "| NOASSERTION |" in printed  # the test shards state no licence


def test_a_checkpoint_saved_before_bills_gets_its_bill_replayed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The run saved under the flat config (before bills): its bill is replayed from its data position over the
    token shards beside it, and comes to the tokens it had seen."""
    fixture = shutil.copytree(FLAT_RUN, tmp_path / "flat-config-run")
    checkpoint = resolve_checkpoint(str(fixture / "train"))
    meta = read_meta(checkpoint)
    assert "bill" not in meta["data"]
    assert main(["card", "--model", str(fixture / "train")]) == 0
    printed = capsys.readouterr().out
    assert "Saved before bills existed: replayed" in printed
    assert f"{meta['tokens_seen']:,} tokens fed" in printed
