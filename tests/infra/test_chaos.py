"""infra/stack/chaos.py with a small budget against a live stack (up.sh): faults injected at seeded moments, the
faulted runs resumed to completion, and every invariant checked after each fault and at the end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.infra.processes import run_stack_script, stack_script
from tests.train.token_corpus import build_token_data

pytestmark = pytest.mark.slow  # a stack start, a reference run, runs resumed after each fault, their evaluations

chaos = stack_script("chaos")


def test_a_small_chaos_run_holds_every_invariant(
    tmp_path: Path, local_stack: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    token_data = build_token_data(str(tmp_path / "tokens"))
    run_stack_script("up.sh", local_stack)
    for name in ("PRETRAIN_STACK_DIR", "PRETRAIN_STACK_PORT", "PREFECT_HOME", "PATH"):
        monkeypatch.setenv(name, local_stack[name])  # the restart fault runs down.sh and up.sh of this stack
    output = tmp_path / "chaos"
    code = chaos.main([
        "--faults", "2", "--faults-per-run", "1", "--seed", "4", "--steps", "400", "--checkpoint-every", "100",
        "--seq-len", str(token_data.seq_len), "--max-delay", "5", "--evaluation-wait", "900",
        "--tokens-url", token_data.tokens_url, "--tokenizer-url", token_data.tokenizer_url,
        "--output-root", str(output),
    ])  # fmt: skip
    report = json.loads((output / "chaos-report.json").read_text())
    assert code == 0 and report["invariants_broken"] == [], report
    assert sum(report["faults"].values()) == 2
    assert all(report["invariants_held"][name] > 0 for name in chaos.INVARIANTS), report
