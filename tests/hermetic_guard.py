"""A pytest plugin that fails a test which reads a file of the host (documentation, licences, man pages, other
packages' data) instead of one the repository ships: such a test passes here and fails, or measures something
else, on a machine with other packages installed.

An audit hook (PEP 578) sees every `open`; a read under a host root that is not part of the Python installation
running the tests (its prefixes, so stdlib and site-packages), nor a shared library, nor the time-zone database
libraries read for themselves, is charged to the test phase that made it.
`PRETRAIN_HOST_ROOTS` (os.pathsep-separated) replaces the host roots, so the guard itself can be tested.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import zoneinfo
from collections.abc import Generator
from pathlib import Path

import pytest

DEFAULT_HOST_ROOTS = ("/usr", "/opt", "/var/lib", "/srv")
# Files libraries read for themselves, whatever the test: the time-zone database, found where the standard library
# looks for it (pandas and Prefect read it on import). Nothing else turned up in a full run of the suite.
LIBRARY_FILES = tuple(zoneinfo.TZPATH)


def _prefixes(paths: tuple[str, ...]) -> tuple[str, ...]:
    return tuple({os.path.join(os.path.realpath(p), "") for p in paths} | {os.path.join(p, "") for p in paths})


HOST_ROOTS = _prefixes(
    tuple(filter(None, os.environ.get("PRETRAIN_HOST_ROOTS", "").split(os.pathsep))) or DEFAULT_HOST_ROOTS
)
ALLOWED = _prefixes((sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, *LIBRARY_FILES))
REPO_ROOT = os.path.join(str(Path(__file__).resolve().parent.parent), "")

host_reads: list[str] = []


def is_host_file(path: str) -> bool:
    """Whether reading ``path`` makes a test depend on what this machine has installed."""
    if path.startswith(REPO_ROOT) or path.startswith(ALLOWED) or ".so" in os.path.basename(path):
        return False
    return path.startswith(HOST_ROOTS)


def _audit(event: str, args: tuple[object, ...]) -> None:
    if event != "open":
        return
    path, mode = args[0], args[1]
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, str) or (isinstance(mode, str) and ("w" in mode or "a" in mode)):
        return
    path = os.path.abspath(path)
    if is_host_file(path):
        host_reads.append(path)


def _build_library_caches() -> None:
    """Let matplotlib build its font cache before the guard watches: on a machine where it has none, its first
    import scans every font the system has (its own directories and fontconfig's), which is no test's input (its
    plots use the DejaVu fonts it ships). It is in the test environment through the eval extra."""
    with contextlib.suppress(ImportError):
        importlib.import_module("matplotlib.font_manager")


_build_library_caches()
sys.addaudithook(_audit)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, None, None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if not host_reads:
        return
    read = sorted(set(host_reads))
    host_reads.clear()
    if report.failed:
        return
    shown = ", ".join(read[:5]) + (f" and {len(read) - 5} more" if len(read) > 5 else "")
    report.outcome = "failed"
    report.longrepr = (
        f"{item.nodeid} ({call.when}, its fixtures or an import before it) read files of this machine, not of "
        f"the repository: {shown}. Ship the text under data/ (tests/shipped_text.py) instead."
    )
