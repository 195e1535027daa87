"""Every `pretrain` example a user reads, in the README's code blocks and in `pretrain --help`, runs against the
demo build: the build made as the README makes it (`pretrain run` in a fresh directory, training cut to 4 steps),
then each example as printed, in that directory. An example this test cannot run here says why and which test
covers it; a new example that is in neither list fails the test."""

from __future__ import annotations

import gzip
import json
import re
import shlex
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from pretrain_cli.main import EPILOG, main
from tests.infra.processes import free_port
from tests.shipped_text import LICENCES, REPO_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("prefect_harness")]

# Examples not run here, by how they start: why, and what runs them instead.
ELSEWHERE = {
    "pretrain run --config my.yaml --set train.max_steps=2000 --set storage.root=s3://": "S3: tests/test_pipeline.py",
    "pretrain run --set storage.root=s3://": "S3 on moto's server: tests/test_pipeline.py, tests/cli/test_main.py",
    "pretrain run --config my.yaml --set train.max_steps=2000 --set mixture": "a rebuild from the mixture on and "
    "2000 steps; a config file with overrides: tests/flows/test_pipeline_flow.py",
    "pretrain corpus --set execution.dask_address=tls://10.0.0.5": "a cluster on another host (no traffic leaves "
    "this machine): tests/infra/test_dask_tls.py starts a TLS cluster on loopback",
    "pretrain ablate": "20 minutes on 2 cores: tests/ablation/test_ablation_flow.py runs the flow on two small arms",
    "pretrain stage-report": "tests/cli/test_stage_report.py",
}
TRAIN_STEPS = ["--set", "train.max_steps=4", "--set", "train.checkpoint_every=4", "--set", "train.eval_every=2"]


def examples() -> list[list[str]]:
    """Each example's words: the README's `.venv/bin/pretrain ...` lines in code blocks and the `--help` epilog's
    `pretrain ...` lines, continuation lines joined, comments cut, placeholders named."""
    found = []
    readme_blocks = re.findall(r"```bash\n(.*?)```", (REPO_ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    for text in [*readme_blocks, EPILOG]:
        for line in re.sub(r"\\\n\s*", " ", text).splitlines():
            line = line.strip().removeprefix(".venv/bin/")
            if line.startswith("pretrain "):
                found.append([PLACEHOLDERS.get(word, word) for word in shlex.split(line, comments=True)])
    return found


PLACEHOLDERS = {"OLD_ROOT": "outputs/demo", "NEW_ROOT": "outputs/demo"}  # `card --compare`: a build with itself


def _elsewhere(example: list[str]) -> str | None:
    text = " ".join(example)
    return next((why for start, why in ELSEWHERE.items() if text.startswith(start)), None)


def _here(serving: bool) -> list[list[str]]:
    return [e for e in examples() if _elsewhere(e) is None and ("serve" in e) == serving]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh directory holding `outputs/demo` as `pretrain run` leaves it there, and the inputs the examples
    name (a JSONL of real licence texts, a code JSONL with paths, my.yaml: the demo config as a file)."""
    folder = tmp_path_factory.mktemp("examples")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        assert main(["run", *TRAIN_STEPS]) == 0
    texts = [p.read_text(encoding="utf-8") for p in sorted(LICENCES.glob("*")) if p.is_file()]
    lines = "\n".join(json.dumps({"text": t}) for t in texts if t.strip())
    for name in ("docs.jsonl.gz", "my_docs.jsonl.gz"):
        (folder / name).write_bytes(gzip.compress(lines.encode()))
    code = [{"text": p.read_text(encoding="utf-8"), "path": p.name} for p in sorted((REPO_ROOT / "flows").glob("*.py"))]
    (folder / "the_stack.jsonl").write_text("\n".join(json.dumps(row) for row in code), encoding="utf-8")
    return folder


@pytest.fixture
def in_demo(demo: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.chdir(demo)
    yield demo


def test_the_examples_are_found_and_each_is_run_here_or_named_elsewhere() -> None:
    found = [" ".join(example) for example in examples()]
    assert len(found) >= 20 and any(e.startswith("pretrain generate outputs/demo/train") for e in found)
    assert all(any(e.startswith(start) for e in found) for start in ELSEWHERE), "an exemption no example needs"


@pytest.mark.parametrize("example", _here(serving=False), ids=" ".join)
def test_the_example_runs_against_the_demo_build(example: list[str], in_demo: Path) -> None:
    argv = example[1:]
    if argv == ["--help"]:
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 0
        return
    if argv == ["run"]:
        argv += TRAIN_STEPS  # the build itself, again: a finished build does no stage work
    manifests = sorted((in_demo / "outputs" / "demo" / "corpus").rglob("manifest.json"))
    before = [p.stat().st_mtime_ns for p in manifests]
    assert main(argv) == 0, " ".join(example)
    assert [p.stat().st_mtime_ns for p in manifests] == before, "a finished build must do no stage work"


@pytest.mark.parametrize("example", _here(serving=True), ids=" ".join)
def test_the_serve_example_answers_health(example: list[str], in_demo: Path) -> None:
    """`serve` blocks: started as printed (on a free port), asked for /health, stopped."""
    export = in_demo / "outputs" / "demo" / "export"
    if not export.exists():
        assert main(["export", "outputs/demo/train", "--format", "safetensors", "--output", str(export)]) == 0
    port = str(free_port())
    argv = [port if word == "8000" else word for word in example[1:]]
    server = subprocess.Popen([sys.executable, "-m", "pretrain_cli", *argv], cwd=in_demo)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as response:
                    assert json.loads(response.read())["status"] == "ok"
                    break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None, "serve did not come up"
                time.sleep(1)
    finally:
        server.terminate()
        server.wait(timeout=30)
