"""Throughput of the cleaning stage against the naive baseline: ftfy.fix_text + langdetect.detect per document.

Documents come from the demo corpus as ingest hands it on (else from real text on this machine, see corpus.py);
prose is cut into documents of about --chunk-chars characters at paragraph boundaries, the size of a typical web
page, and code files stay whole. One core; times are CPU seconds of this process.

    python benchmarks/bench_clean.py --max-docs 400
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import contextlib
import itertools

import ftfy
import langdetect
from corpus import load_documents, megabytes, pages, spread, stage_table
from ftfy.badness import BADNESS_RE
from langdetect.lang_detect_exception import LangDetectException
from timing import Rate, cpu_time, print_rates

from pretrain_core import schema
from pretrain_core.clean import mojibake
from pretrain_core.clean.config import CleanConfig
from pretrain_core.clean.stage import CleanStage


def baseline(texts: list[str]) -> None:
    """What a first attempt does: fix everything with ftfy's defaults, detect on the whole text."""
    for text in texts:
        fixed = ftfy.fix_text(text)
        with contextlib.suppress(LangDetectException):  # no features: the caller would record "unknown"
            langdetect.detect(fixed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-docs", type=int, default=400, help="documents to time (0 = all found)")
    parser.add_argument("--chunk-chars", type=int, default=3000, help="prose document size (0 = whole documents)")
    parser.add_argument(
        "--reference", action="store_true", help="time the repo's reference text (data/reference), not the demo corpus"
    )
    parser.add_argument("--repeat", type=int, default=1, help="runs per implementation; the best is reported")
    args = parser.parse_args()

    found, origin = load_documents(args.reference)
    docs = spread(pages(found, args.chunk_chars), args.max_docs)
    table = stage_table(docs, schema.INGEST)
    texts = [doc.text for doc in docs]
    size = megabytes(texts)
    print(f"documents: {origin}; {len(docs)} timed ({sum(d.domain == 'code' for d in docs)} code), one core")

    stage = CleanStage(CleanConfig())
    stage.process(table.slice(0, 20))  # load langdetect profiles outside the timing
    langdetect.DetectorFactory.seed = 0
    baseline(texts[:1])

    ours, output = cpu_time(lambda: stage.process(table), args.repeat)
    base, _ = cpu_time(lambda: baseline(texts), args.repeat)
    naive = Rate("ftfy.fix_text + langdetect.detect", base, len(texts), size)
    print_rates("cleaning", [Rate("ours: clean stage", ours, len(texts), size), naive], naive)
    print(f"ours kept {output.kept.num_rows}, dropped {output.dropped.num_rows}")

    # Text repair's mojibake test (`clean/mojibake.py`) against ftfy's pattern searched whole, on what the repair
    # gate asks about: each non-ASCII document and each of its runs of non-ASCII lines.
    asked = [run for text in texts if not text.isascii() for run in [text, *_non_ascii_runs(text)]]
    whole, found = cpu_time(lambda: sum(bool(BADNESS_RE.search(t)) for t in asked), args.repeat)
    windows, found_by_windows = cpu_time(lambda: sum(mojibake.is_bad(t) for t in asked), args.repeat)
    assert found == found_by_windows
    searched_whole = Rate("ftfy.badness pattern searched whole", whole, len(asked), megabytes(asked))
    rates = [
        Rate("ours: searched around mojibake-prone characters", windows, len(asked), megabytes(asked)),
        searched_whole,
    ]
    print_rates(f"mojibake test ({len(asked)} texts and runs, {found} with a match)", rates, searched_whole)


def _non_ascii_runs(text: str) -> list[str]:
    pieces = text.split("\n")
    lines = [piece + "\n" for piece in pieces[:-1]] + [pieces[-1]]
    return ["".join(run) for ascii_only, run in itertools.groupby(lines, key=str.isascii) if not ascii_only]


if __name__ == "__main__":
    main()
