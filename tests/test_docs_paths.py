"""Docs name only paths that exist: a newcomer follows them, and a renamed module must take its mentions along."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOP_LEVEL = ("pretrain_core", "pretrain_eval", "pretrain_cli", "tasks", "flows", "infra", "tests", "benchmarks",
             "scripts", "data", "docs", ".ci")  # fmt: skip
# A repository path in prose or code spans; a pattern (`bench_*.py`, `<stage>/`) or a unit (docs/s) is no path.
PATH = re.compile(rf"(?<![\w/.-])((?:{'|'.join(map(re.escape, TOP_LEVEL))})/[\w./-]*\w)(?![\w*<{{])")
UNITS = {"docs/s"}


def test_every_path_the_docs_name_exists() -> None:
    missing = sorted(
        f"{doc.relative_to(ROOT)}: {path}"
        for doc in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
        for path in PATH.findall(doc.read_text(encoding="utf-8"))
        if path not in UNITS and not (ROOT / path).exists()
    )
    assert missing == []
