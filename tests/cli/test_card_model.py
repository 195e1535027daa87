"""`pretrain card --model`: a checkpoint's bill of materials, the tokens it was fed by domain, source and licence."""

from __future__ import annotations

import pytest

from pretrain_cli.main import main
from pretrain_core.train.checkpoint.catalog import read_meta, resolve_checkpoint
from tests.evaluate import conftest as evaluate_fixtures

token_data = evaluate_fixtures.token_data
trained_output = evaluate_fixtures.trained_output


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
