"""`python -m pretrain_eval.quality_classifier [--check] [--output DIR]`: rebuild or check the shipped quality
classifier."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pretrain_core.quality.classifier import SHIPPED_CLASSIFIER, from_bytes
from pretrain_eval.quality_classifier.build import (
    differences,
    fit_classifiers,
    report,
    shipped_dir,
    training_set,
    write,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pretrain_eval.quality_classifier", description=__doc__)
    parser.add_argument("--check", action="store_true", help="compare a fresh build with the shipped one")
    parser.add_argument("--output", type=Path, default=shipped_dir(), help="directory to write the model to")
    args = parser.parse_args(argv)
    data = training_set()
    built = fit_classifiers(data)
    if args.check:
        problems = differences(built, from_bytes((shipped_dir() / SHIPPED_CLASSIFIER).read_bytes()))
        for problem in problems:
            print(f"shipped quality classifier: {problem}", file=sys.stderr)
        return 1 if problems else 0
    args.output.mkdir(parents=True, exist_ok=True)
    write(built, report(data, built), args.output)
    print(f"wrote {args.output / SHIPPED_CLASSIFIER}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
