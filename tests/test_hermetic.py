"""The hermetic guard (`tests/hermetic_guard.py`) fails a test that reads the host's files, and only such a test."""

from __future__ import annotations

import os
import subprocess
import sys
import zoneinfo
from pathlib import Path

from tests.hermetic_guard import ALLOWED, HOST_ROOTS, is_host_file
from tests.shipped_text import LICENCES, REPO_ROOT

PROBE = """
from pathlib import Path

HOST = Path({host!r})


def test_reads_the_host() -> None:
    assert HOST.read_text(encoding="utf-8") == "installed here only"


def test_reads_the_repo() -> None:
    assert Path({repo!r}).read_text(encoding="utf-8")


def test_writes_under_the_host_root() -> None:
    (HOST.parent / "written").write_text("a write is not a dependency", encoding="utf-8")
"""


def test_a_test_reading_host_files_fails_and_names_them(tmp_path: Path) -> None:
    host_root = tmp_path / "usr"
    host_file = host_root / "share" / "doc" / "README"
    host_file.parent.mkdir(parents=True)
    host_file.write_text("installed here only", encoding="utf-8")
    probe = tmp_path / "test_probe.py"
    probe.write_text(PROBE.format(host=str(host_file), repo=str(LICENCES / "GPL-3")), encoding="utf-8")
    env = {**os.environ, "PRETRAIN_HOST_ROOTS": str(host_root), "PYTHONPATH": str(REPO_ROOT)}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "tests.hermetic_guard", "-p", "no:cacheprovider", str(probe)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert "1 failed, 2 passed" in run.stdout, run.stdout + run.stderr
    assert f"read files of this machine, not of the repository: {host_file}" in run.stdout
    assert "FAILED test_probe.py::test_reads_the_host" in run.stdout


def test_the_python_installation_and_the_repo_are_not_host_files() -> None:
    assert not is_host_file(os.__file__)  # the stdlib of the interpreter running the tests
    assert not is_host_file(str(LICENCES / "GPL-3"))
    assert not is_host_file(os.path.join(zoneinfo.TZPATH[0], "UTC"))  # the time-zone database libraries read
    # A package's documentation under every host root the Python installation does not own is a host file.
    roots = [root for root in HOST_ROOTS if not root.startswith(ALLOWED)]
    assert roots
    for root in roots:
        assert is_host_file(os.path.join(root, "share", "doc", "some-package", "README"))
