"""The library works installed from its wheel, outside this checkout: a temporary venv, an empty directory.

The quick tests install the wheel alone (`--no-deps`) into a fresh venv that borrows this venv's dependencies
through a path file (the checkout's editable install is not visible there: path files of a borrowed directory are
not read), so what is tested is the wheel: its modules, its package data, no path into the checkout. The slow test
installs it with its declared dependencies and runs the whole demo.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

from tests.shipped_text import REPO_ROOT

PACKAGE_DATA = (
    "pretrain_core/defaults/demo.yaml",
    "pretrain_core/data/demo/sources.yaml",
    "pretrain_core/data/pii_tagger.safetensors",
    "pretrain_core/data/names/zh_surnames.txt",
)


def _build_wheel(out: Path) -> Path:
    """Built from a copy of the checkout, as from a fresh clone: a build/ left in the checkout can hold stale files."""
    source = out / "source"
    ignored = shutil.ignore_patterns(
        ".git", ".venv", "build", "*.egg-info", "outputs", ".prefect*", "__pycache__", "quality-models"
    )
    shutil.copytree(REPO_ROOT, source, ignore=ignored)
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(source)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    (wheel,) = out.glob("pretrain-*.whl")
    return wheel


def _venv(root: Path) -> Path:
    venv.create(root, with_pip=False, symlinks=True)
    return root / "bin" / "python"


def _install(python: Path, *args: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-input", *args],
        check=True, capture_output=True, timeout=900,
    )  # fmt: skip


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _build_wheel(tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The venv's `bin/`: the wheel installed alone, dependencies borrowed from the test venv."""
    root = tmp_path_factory.mktemp("venv")
    python = _venv(root)
    _install(python, "--no-deps", str(wheel))
    site = Path(subprocess.check_output([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                        text=True).strip())  # fmt: skip
    (site / "borrowed-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    return python.parent


def _run(bin_dir: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run([str(bin_dir / args[0]), *args[1:]], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=1800)  # fmt: skip


def test_the_wheel_holds_the_package_data(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert set(PACKAGE_DATA) <= names
    assert any(n.startswith("pretrain_core/data/demo/code/") for n in names)
    assert not any(
        n.startswith(("tests/", "scripts/", "data/labelled/", "pretrain_core/stage_quality/")) for n in names
    )


def test_installed_library_reads_its_data_from_the_install_not_the_checkout(installed: Path, tmp_path: Path) -> None:
    probe = (
        "import json, pretrain_core; from pretrain_core.config import load_config;"
        "from pretrain_core.pii.classifier import load_tagger; load_tagger(None);"
        "print(json.dumps([pretrain_core.__file__, [s.path for s in load_config().sources]]))"
    )
    run = _run(installed, tmp_path, "python", "-c", probe)
    assert run.returncode == 0, run.stderr
    module, paths = json.loads(run.stdout)
    install = Path(module).parent
    assert not install.is_relative_to(REPO_ROOT)
    assert paths and all(Path(p).is_relative_to(install / "data" / "demo") and Path(p).exists() for p in paths)


def test_installed_cli_runs_a_stage_in_an_empty_directory(installed: Path, tmp_path: Path) -> None:
    docs = [{"id": str(i), "text": f"Document {i % 3}: " + "a sentence of plain prose, " * 20} for i in range(9)]
    (tmp_path / "x.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    assert _run(installed, tmp_path, "pretrain", "--help").returncode == 0
    run = _run(installed, tmp_path, "pretrain", "stage", "dedup", "--input", "x.jsonl", "--output", "out")
    assert run.returncode == 0, run.stderr
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert (manifest["docs_in"], manifest["docs_out"]) == (9, 3)  # three distinct texts, each kept once


@pytest.mark.slow
def test_fresh_install_with_its_dependencies_runs_the_demo(wheel: Path, tmp_path: Path) -> None:
    """What a new user does: install the wheel and its declared dependencies (no extras), `pretrain run`."""
    python = _venv(tmp_path / "venv")
    _install(python, "-c", str(REPO_ROOT / "constraints.txt"), str(wheel))
    work = tmp_path / "empty"
    work.mkdir()
    run = _run(python.parent, work, "pretrain", "run")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert list((work / "outputs" / "demo" / "train").rglob("checkpoints/step-*/manifest.json"))
    shutil.rmtree(tmp_path / "venv")
