"""The command line the data builders share: build a directory, or rebuild it elsewhere and compare (`--check`),
which is how we show a shipped data set is exactly what its script makes."""

from __future__ import annotations

import argparse
import filecmp
import gzip
import io
import json
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from source_snapshot import SourceSnapshot


def gzip_jsonl(records: Iterable[dict[str, object]]) -> bytes:
    """JSON lines (keys sorted, UTF-8 as is) gzipped with no time or name in the header: same records, same bytes."""
    data = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records).encode()
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, compresslevel=9, mtime=0) as handle:
        handle.write(data)
    return buffer.getvalue()


def differences(left: Path, right: Path) -> list[str]:
    """Relative paths that differ between the directories the build (`left`) wrote files into and the same
    directories under `right`: missing on one side, or different bytes. Other directories of `right` are not
    the build's business (a builder may write into a few directories of the repository)."""
    names = {p.relative_to(left).as_posix() for p in left.rglob("*") if p.is_file()}
    built_dirs = {Path(name).parent for name in names}
    for directory in built_dirs:
        if (right / directory).is_dir():
            names |= {(directory / p.name).as_posix() for p in (right / directory).iterdir() if p.is_file()}
    return sorted(
        n
        for n in names
        if not ((left / n).is_file() and (right / n).is_file() and filecmp.cmp(left / n, right / n, shallow=False))
    )


def build_or_check(
    build: Callable[[Path], object],
    default_out: Path,
    description: str | None,
    argv: Sequence[str] | None = None,
    sources: SourceSnapshot | None = None,
) -> int:
    """`build(out)`; with --check, build into a temporary directory and exit 1 listing the files that differ.
    A builder that reads installed files passes their `sources` snapshot: it is served from the shipped archive,
    or recorded from this machine with --record-sources."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=default_out, help="output directory (default: %(default)s)")
    parser.add_argument(
        "--check",
        action="store_true",
        help="rebuild into a temporary directory and report files that differ from --out (exit 1 if any)",
    )
    if sources is not None:
        parser.add_argument(
            "--record-sources",
            action="store_true",
            help=f"read the installed files themselves and record them into {sources.archive} (default: read that "
            "archive, so the build does not depend on what this machine has installed)",
        )
    args = parser.parse_args(argv)
    if sources is not None:
        sources.start(record=args.record_sources)
    if not args.check:
        build(args.out)
        if sources is not None:
            sources.save()
            sources.write_packages()
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        build(Path(tmp))
        diff = differences(Path(tmp), args.out)
    for name in diff:
        print(f"differs: {name}", file=sys.stderr)
    print(f"{args.out}: {'differs' if diff else 'up to date'}")
    return 1 if diff else 0
