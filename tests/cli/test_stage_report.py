"""`pretrain stage-report` end to end on a slice of every labelled set: each stage's figures beside its baseline,
the exit status saying whether any of ours is below its bar."""

from __future__ import annotations

from pathlib import Path

import pytest

from pretrain_cli.main import main
from pretrain_eval.stage_quality.report import PARTS
from tests.shipped_text import REPO_ROOT

LABELLED = REPO_ROOT / "data" / "labelled"


@pytest.mark.slow  # every stage on its labelled sets beside its baselines: end to end
def test_every_part_reports_ours_and_a_baseline_and_the_exit_status_follows_the_bars(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    markdown = tmp_path / "report.md"
    status = main(["stage-report", "--limit", "150", "--markdown", str(markdown), "--sets", str(LABELLED)])
    out = capsys.readouterr().out
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in markdown.read_text().splitlines()[2:]]
    for part in PARTS:
        systems = {r[3] for r in rows if r[0] == part}
        assert "pretrain" in systems and len(systems) >= 2, (part, systems)
    verdicts = [r[6] for r in rows if r[3] == "pretrain" and r[5]]
    assert verdicts and set(verdicts) <= {"ok", "MISS"}
    assert status == (1 if "MISS" in verdicts else 0)
    assert out.count("below the bar:") == verdicts.count("MISS")
    assert len(out.splitlines()) - out.count("below the bar:") == 1 + len(rows)  # header + one line per figure


def test_missing_labelled_sets_are_one_clear_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stage-report", "--sets", str(tmp_path / "nowhere")]) == 2
    assert capsys.readouterr().err.strip() == (
        f"pretrain: no labelled sets at {tmp_path / 'nowhere'}: run from a checkout of the repo or pass --sets DIR"
    )
