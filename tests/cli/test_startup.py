"""The command line starts at once: its parser loads no trainer, kernel or orchestrator, and every `--help` works.

How long `--help` takes is measured by benchmarks/bench_cli_startup.py; what made it slow (torch, numba and the
data stages' kernels loaded at import) is what these tests hold off.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest

from pretrain_cli.main import build_parser

# What `import pretrain_cli.main` must not load: each costs from 0.2 to 2 CPU seconds and none is needed to parse
# arguments or print help (the commands import what they use when they run).
HEAVY = ("torch", "numba", "prefect", "pandas", "sklearn", "scipy", "langdetect", "transformers", "sentencepiece")


def _subcommands() -> list[str]:
    parser = build_parser()
    subparsers = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    return sorted(subparsers.choices)


def test_importing_the_cli_loads_no_heavy_module() -> None:
    probe = f"import json, sys; import pretrain_cli.main; print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert json.loads(result.stdout) == []


@pytest.mark.parametrize("command", ["", *_subcommands()])
def test_help_of_every_command_prints_and_exits_0(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args([*([command] if command else []), "--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: pretrain")
    assert "%%" not in text  # argparse formats only help strings: a doubled % in a description prints as is
