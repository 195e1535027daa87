"""Throughput of the cleaning stage against datatrove's quality filters, and against ftfy.fix_text +
langdetect.detect per document.

The whole stage (text repair, language id, C4 line filters when enabled, Gopher rules; code rules for code) is
timed against two peers on the same documents: ftfy's `fix_text` + langdetect's `detect` (repair and language id
alone), and the same followed by datatrove's `GopherRepetitionFilter`, `GopherQualityFilter`, `C4QualityFilter` and
`FineWebQualityFilter` on prose, each at its defaults, a document passed on until one drops it (datatrove's own
language filter needs a fastText model downloaded at run time, hence langdetect). The heuristics are then timed
alone on the English prose among those documents (English as our language id labels it beforehand, untimed:
datatrove's filters default to English word splitting with spaCy): our Gopher rules (`prose_rules.first_failure`
with English thresholds and stop words) against datatrove's two Gopher filters, and our C4 line filters
(`c4_lines.filter_lines`, switched on) against its `C4QualityFilter`.

Documents come from the demo corpus as ingest hands it on (with --reference, the repository's reference text);
prose is cut into documents of about --chunk-chars characters at paragraph boundaries, the size of a typical web
page, and code files stay whole. One core; times are CPU seconds of this process, the best of --repeat runs.

    python benchmarks/bench_clean.py
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import contextlib
import itertools
from collections.abc import Sequence
from importlib.metadata import version

import ftfy
import langdetect
from corpus import Document, load_documents, megabytes, pages, spread, stage_table
from datatrove.data import Document as DatatroveDocument
from datatrove.pipeline.filters import (
    C4QualityFilter,
    FineWebQualityFilter,
    GopherQualityFilter,
    GopherRepetitionFilter,
)
from datatrove.pipeline.filters.base_filter import BaseFilter
from ftfy.badness import BADNESS_RE
from langdetect.lang_detect_exception import LangDetectException
from timing import Rate, cpu_time, print_rates

from pretrain_core import schema
from pretrain_core.clean import mojibake, prose_rules
from pretrain_core.clean.c4_lines import filter_lines
from pretrain_core.clean.config import CleanConfig
from pretrain_core.clean.langid import detect_language
from pretrain_core.clean.stage import CleanStage

GOPHER: list[BaseFilter] = [GopherRepetitionFilter(), GopherQualityFilter()]
C4: list[BaseFilter] = [C4QualityFilter()]
DATATROVE: list[BaseFilter] = [*GOPHER, *C4, FineWebQualityFilter()]


def baseline(docs: Sequence[Document], filters: Sequence[BaseFilter] = ()) -> list[str | None]:
    """Fix everything with ftfy's defaults, detect the language on the whole text, then run ``filters`` on prose;
    each document's drop reason (None: kept)."""
    reasons: list[str | None] = []
    for doc in docs:
        fixed = ftfy.fix_text(doc.text)
        with contextlib.suppress(LangDetectException):  # no features: the caller would record "unknown"
            langdetect.detect(fixed)
        reasons.append(None if doc.domain == "code" else first_rejection(filters, fixed))
    return reasons


def first_rejection(filters: Sequence[BaseFilter], text: str) -> str | None:
    """The reason of the first datatrove filter that drops the text, as its pipeline passes a document on (a fresh
    Document each time: C4's filter rewrites the text it keeps)."""
    doc = DatatroveDocument(text=text, id="bench")
    for step in filters:
        verdict = step.filter(doc)
        if verdict is not True:
            return verdict[1] if isinstance(verdict, tuple) else step.name
    return None


def datatrove_reasons(filters: Sequence[BaseFilter], texts: list[str]) -> list[str | None]:
    return [first_rejection(filters, text) for text in texts]


def our_gopher_reasons(texts: list[str], cfg: CleanConfig, lang: str) -> list[str | None]:
    """The stage's Gopher rules with one language's thresholds and stop words (`CleanStage.clean_prose`)."""
    prose = cfg.prose
    thresholds = prose.thresholds_for(lang)
    stop_words = frozenset(word.lower() for word in prose.stop_words.get(lang, []))
    return [
        prose_rules.first_failure(
            prose_rules.ProseDoc(text, stop_words, prose.unsegmented_share, prose.unsegmented_ngram_scale), thresholds
        )
        for text in texts
    ]


def our_c4_reasons(texts: list[str], cfg: CleanConfig) -> list[str | None]:
    """The stage's C4 line filters, switched on (they are off by default: they harm text written in lines)."""
    c4 = cfg.prose.c4_lines.model_copy(update={"enabled": True})
    return [filter_lines(text, c4).reason for text in texts]


def heuristics(texts: list[str], cfg: CleanConfig, repeat: int) -> None:
    """The rules alone on English prose: ours against datatrove's filters."""
    size = megabytes(texts)
    ways = [
        ("ours: Gopher rules (prose_rules)", lambda: our_gopher_reasons(texts, cfg, "en")),
        ("datatrove: GopherRepetition + GopherQuality", lambda: datatrove_reasons(GOPHER, texts)),
        ("ours: C4 line filters (c4_lines, on)", lambda: our_c4_reasons(texts, cfg)),
        ("datatrove: C4QualityFilter", lambda: datatrove_reasons(C4, texts)),
        ("datatrove: all four filters in turn", lambda: datatrove_reasons(DATATROVE, texts)),
    ]
    timed = [(name, *cpu_time(run, repeat)) for name, run in ways]
    rates = [Rate(name, seconds, len(texts), size) for name, seconds, _ in timed]
    print_rates(
        f"heuristics alone, {len(texts)} English prose documents (ratios against datatrove's Gopher)", rates, rates[1]
    )
    for name, _, reasons in timed:
        print(f"  {name:<46} drops {sum(r is not None for r in reasons)}")
    print(f"  C4 line filters, ours against datatrove's: {rates[3].seconds / rates[2].seconds:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-docs", type=int, default=400, help="documents to time (0 = all found)")
    parser.add_argument("--chunk-chars", type=int, default=3000, help="prose document size (0 = whole documents)")
    parser.add_argument(
        "--reference", action="store_true", help="time the repo's reference text (data/reference), not the demo corpus"
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per implementation; the best is reported")
    args = parser.parse_args()

    loaded, origin = load_documents(args.reference)
    docs = spread(pages(loaded, args.chunk_chars), args.max_docs)
    table = stage_table(docs, schema.INGEST)
    texts = [doc.text for doc in docs]
    size = megabytes(texts)
    print(f"documents: {origin}; {len(docs)} timed ({sum(d.domain == 'code' for d in docs)} code), one core")

    print(f"datatrove {version('datatrove')}, spaCy {version('spacy')}, ftfy {version('ftfy')}")

    cfg = CleanConfig()
    stage = CleanStage(cfg)
    stage.process(table.slice(0, 20))  # load language profiles outside the timing
    langdetect.DetectorFactory.seed = 0
    baseline(docs[:20], DATATROVE)  # langdetect's profiles, spaCy's tokenizer

    ours, output = cpu_time(lambda: stage.process(table), args.repeat)
    base, _ = cpu_time(lambda: baseline(docs), args.repeat)
    peer_seconds, peer_reasons = cpu_time(lambda: baseline(docs, DATATROVE), args.repeat)
    peer = Rate("the same + datatrove Gopher, C4, FineWeb filters", peer_seconds, len(texts), size)
    rates = [
        Rate("ours: clean stage", ours, len(texts), size),
        peer,
        Rate("ftfy.fix_text + langdetect.detect", base, len(texts), size),
    ]
    print_rates("cleaning (ratios against ftfy + langdetect + datatrove's filters)", rates, peer)
    print(f"ours kept {output.kept.num_rows}, dropped {output.dropped.num_rows};", end=" ")
    print(f"ftfy + langdetect + datatrove dropped {sum(r is not None for r in peer_reasons)}")

    english = [d.text for d in docs if d.domain != "code" and detect_language(d.text, cfg.langid).lang == "en"]
    heuristics(english, cfg, args.repeat)

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
