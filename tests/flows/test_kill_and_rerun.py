"""`pretrain corpus` killed outright (SIGKILL, no handler runs) in the middle of the DAG, then run again: the rerun
finishes and every data and quarantine file is byte-identical to a run that was never interrupted; the lock of the
killed run does not block the rerun (same config joins a lapsed claim)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.shipped_text import REPO_ROOT

pytestmark = pytest.mark.slow  # three corpus runs of the small config, each with its own ephemeral Prefect API


def _corpus(config: Path, home: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PREFECT_HOME": str(home), "PYTHONPATH": str(REPO_ROOT)}
    env.pop("PREFECT_API_URL", None)
    return subprocess.Popen(
        [sys.executable, "-m", "pretrain_cli.main", "corpus", "--config", str(config)],
        cwd=REPO_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip


def _outputs(root: Path) -> dict[str, bytes]:
    """Data and quarantine shards as readers see them: a write the kill cut short stays a `.tmp-` file, which
    no reader lists."""
    corpus = root / "corpus"
    return {
        str(p.relative_to(corpus)): p.read_bytes()
        for p in sorted(corpus.rglob("*.parquet"))
        if ("/data/" in str(p) or "/dropped/" in str(p)) and not p.name.startswith(".tmp-")
    }


@pytest.mark.parametrize("kill_when", ["dedup", "pii", "tokenize"])
def test_a_corpus_run_killed_mid_dag_reruns_to_the_same_bytes(
    small_config_file: Path, tmp_path: Path, kill_when: str
) -> None:
    config = yaml.safe_load(small_config_file.read_text(encoding="utf-8"))
    interrupted = tmp_path / "interrupted.yaml"
    interrupted.write_text(
        yaml.safe_dump({**config, "storage": {"root": str(tmp_path / "interrupted")}}), encoding="utf-8"
    )
    run = _corpus(interrupted, tmp_path / "home-1")
    deadline = time.monotonic() + 400
    while not (tmp_path / "interrupted" / "corpus" / kill_when).exists():  # the stage has started writing
        assert run.poll() is None, run.stderr.read() if run.stderr else ""
        assert time.monotonic() < deadline, f"{kill_when} never started"
        time.sleep(0.05)
    os.killpg(run.pid, signal.SIGKILL)
    run.wait()

    rerun = _corpus(interrupted, tmp_path / "home-2")
    clean = _corpus(small_config_file, tmp_path / "home-3")
    for process in (rerun, clean):
        _, err = process.communicate(timeout=600)
        assert process.returncode == 0, err.decode()[-3000:]
    resumed, reference = _outputs(tmp_path / "interrupted"), _outputs(tmp_path / "run")
    assert resumed.keys() == reference.keys() and len(reference) > 10
    assert [name for name in reference if resumed[name] != reference[name]] == []
