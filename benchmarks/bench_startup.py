"""Start-up of the command line: wall time, CPU time and peak memory of `pretrain --help` and every
`pretrain COMMAND --help`, against the bare interpreter (`python -c pass`) started the same way.

Each command is a fresh process (the cost a user pays per call), best of --runs. Heavy libraries (torch, numba,
Prefect, scikit-learn) are imported by the command that needs them, so help and argument errors stay fast
(tests/cli/test_startup.py holds them off the parser's imports).

    python benchmarks/bench_startup.py --runs 5
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent


def commands() -> list[list[str]]:
    """`pretrain` itself and each of its subcommands, as the parser lists them."""
    from pretrain_cli.main import build_parser

    parser = build_parser()
    subparsers = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    return [[], *([name] for name in subparsers.choices)]


def measure(argv: list[str], runs: int) -> tuple[float, float, float]:
    """Best wall seconds, best CPU seconds and largest peak RSS (MB) of ``argv`` over ``runs`` fresh processes,
    each process's own figures (os.wait4), not the totals of every child so far."""
    walls, cpus, peaks = [], [], []
    for _ in range(runs):
        started = time.perf_counter()
        child = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
        walls.append(time.perf_counter() - started)
        child.returncode = os.waitstatus_to_exitcode(status)  # reaped here: tell Popen
        if child.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed")
        cpus.append(usage.ru_utime + usage.ru_stime)
        peaks.append(usage.ru_maxrss / 1024)
    return min(walls), min(cpus), max(peaks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="processes per command; the best is reported")
    args = parser.parse_args()
    base_wall, base_cpu, _ = measure([sys.executable, "-c", "pass"], args.runs)
    print(f"baseline `python -c pass`: {base_wall:.3f} s wall, {base_cpu:.3f} s CPU")
    print(f"{'command':<28} {'wall s':>7} {'CPU s':>7} {'MB':>6} {'x baseline':>10}")
    for command in commands():
        wall, cpu, peak = measure([str(BIN / "pretrain"), *command, "--help"], args.runs)
        label = " ".join(["pretrain", *command, "--help"])
        print(f"{label:<28} {wall:>7.3f} {cpu:>7.3f} {peak:>6.0f} {wall / base_wall:>10.1f}")


if __name__ == "__main__":
    main()
