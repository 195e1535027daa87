"""The library stays free of orchestration and evaluation: `pretrain_core` must run without Prefect installed,
and the evaluation harness (`pretrain_eval`) imports the library, never the other way."""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parent.parent / "pretrain_core"


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_core_never_imports_prefect_or_the_orchestration_layers() -> None:
    offenders = {
        str(path.relative_to(CORE)): sorted(
            m
            for m in _imported_modules(path)
            if m.split(".")[0] in {"prefect", "prefect_dask", "tasks", "flows", "pretrain_eval"}
        )
        for path in CORE.rglob("*.py")
    }
    assert {k: v for k, v in offenders.items() if v} == {}
    assert len(offenders) > 10  # the walk really saw the library
