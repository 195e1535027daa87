"""`python -m pretrain_eval.pii_tagger [--check] [--output DIR]`: rebuild or check the shipped PII tagger."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pretrain_core.pii.classifier import SHIPPED_MODEL, NameAddressTagger
from pretrain_eval.pii_tagger.build import REPORT_FILE, TaggerBuild, build_tagger, differences, shipped_dir, write


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pretrain_eval.pii_tagger", description=__doc__)
    parser.add_argument(
        "--check", action="store_true", help="compare a fresh build with the shipped model; write nothing"
    )
    parser.add_argument("--output", type=Path, default=shipped_dir(), help="directory to write the model and report to")
    args = parser.parse_args(argv)
    built = build_tagger(TaggerBuild())
    if args.check:
        shipped = NameAddressTagger.from_bytes((shipped_dir() / SHIPPED_MODEL).read_bytes())
        shipped_report = json.loads((shipped_dir() / REPORT_FILE).read_text(encoding="utf-8"))
        problems = differences(built, shipped, shipped_report)
        for problem in problems:
            print(f"shipped PII tagger: {problem}", file=sys.stderr)
        return 1 if problems else 0
    args.output.mkdir(parents=True, exist_ok=True)
    write(built, args.output)
    print(f"wrote {args.output / SHIPPED_MODEL}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
