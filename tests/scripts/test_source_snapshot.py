"""The source snapshot (`scripts/source_snapshot.py`): a builder that reads installed files reruns from the archive
the repository ships, to the same bytes, with no read of this machine's files (the hermetic guard watches)."""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import pytest


def test_a_recorded_build_replays_from_the_archive_alone(tmp_path: Path, scripts_on_path: None) -> None:
    source_snapshot = importlib.import_module("source_snapshot")
    host = tmp_path / "host"
    (host / "docs").mkdir(parents=True)
    for name, text in {"a.txt": "alpha", "b.txt": "beta", "c.txt": "gamma"}.items():
        (host / "docs" / name).write_text(text, encoding="utf-8")
    os.utime(host / "docs" / "a.txt", (1_686_398_400, 1_686_398_400))  # a builder may write a file's date out
    archive = tmp_path / "shipped" / "sources.tar.xz"
    commands_run: list[str] = []

    def render() -> bytes:  # stands for a host program (a renderer) the builder runs
        commands_run.append("render")
        return b"rendered on the host"

    def build(snapshot: object) -> list[tuple[str, str, int]]:
        files = snapshot.listing("docs", lambda: sorted(snapshot.path(f"{relative}/docs").glob("*.txt")))  # type: ignore[attr-defined]
        read = [(snapshot.name(p), p.read_text(encoding="utf-8"), int(p.stat().st_mtime)) for p in files[:2]]  # type: ignore[attr-defined]
        return [*read, ("render a.txt", snapshot.output("render a.txt", render).decode(), 0)]  # type: ignore[attr-defined]

    relative = str(host).lstrip("/")  # archive members are relative to the root
    recorder = source_snapshot.SourceSnapshot(archive, (f"{relative}/",))
    recorder.start(record=True)
    recorded = build(recorder)
    recorder.save()
    (host / "docs" / "a.txt").write_text("changed after recording", encoding="utf-8")

    (host / "docs" / "b.txt").touch()
    replayer = source_snapshot.SourceSnapshot(archive, (f"{relative}/",))
    replayer.start(record=False)
    b_recorded = recorded[1][2]
    assert build(replayer) == recorded
    assert recorded == [
        (f"{host}/docs/a.txt", "alpha", 1_686_398_400),
        (f"{host}/docs/b.txt", "beta", b_recorded),
        ("render a.txt", "rendered on the host", 0),
    ]
    assert commands_run == ["render"]  # run while recording only
    assert not replayer.path(f"{relative}/docs/c.txt").exists()  # listed, never read: not shipped
    with pytest.raises(SystemExit, match=r"no output for 'render b\.txt'"):
        replayer.output("render b.txt", render)


def test_the_shipped_quality_set_is_what_its_builder_makes_from_the_shipped_sources(scripts_on_path: None) -> None:
    builder = importlib.import_module("build_labelled_quality")
    assert builder.main(["--check"]) == 0


def test_the_shipped_demo_corpus_is_what_its_builder_makes_from_the_shipped_sources(scripts_on_path: None) -> None:
    builder = importlib.import_module("build_demo_corpus")
    assert builder.main(["--check"]) == 0
