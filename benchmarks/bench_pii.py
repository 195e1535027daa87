"""Throughput of the PII stage against a naive regex set: email, IPv4 and digits-only phone and card patterns,
replaced without any validation (what a first attempt at PII scrubbing looks like).

Three rows, all on one core (CPU seconds of this process): the pattern detectors alone, the whole stage
(patterns, the name/address tagger, overlap resolution, redaction, density drops, Arrow in and out), and the
baseline. Documents come from the demo corpus as ingest hands it on (else from real text on this machine, see
corpus.py); prose is cut into documents of about --chunk-chars characters, and each gets a language from a cheap
stop-word vote on its start. The tagger is the model shipped with the package (or --model).

    python benchmarks/bench_pii.py --max-docs 2000
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import re

from corpus import load_documents, megabytes, pages, spread, stage_table
from timing import Rate, cpu_time, print_rates

from pretrain_core import schema
from pretrain_core.pii.config import PiiConfig
from pretrain_core.pii.detectors import find_structured
from pretrain_core.pii.stage import PiiStage
from pretrain_eval.pii_tagger.text_sources import sentence_language

NAIVE = [
    re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+"),  # email
    re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}\b"),  # IPv4
    re.compile(r"\+?\d[\d \-().]{7,}\d"),  # phone: any long digit run with separators
    re.compile(r"\b(?:\d[ -]?){13,19}\b"),  # card: 13-19 digits
]


def naive_redact(texts: list[str]) -> int:
    """The baseline: every regex match replaced, no validation, no context. Returns the number of matches."""
    matches = 0
    for text in texts:
        for pattern in NAIVE:
            text, found = pattern.subn("<PII>", text)
            matches += found
    return matches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-docs", type=int, default=2000, help="documents to time (0 = all found)")
    parser.add_argument("--chunk-chars", type=int, default=3000, help="prose document size (0 = whole documents)")
    parser.add_argument(
        "--reference", action="store_true", help="time the repo's reference text (data/reference), not the demo corpus"
    )
    parser.add_argument("--repeat", type=int, default=1, help="runs per implementation; the best is reported")
    parser.add_argument("--model", help="a tagger model (safetensors) instead of the shipped one")
    args = parser.parse_args()

    found, origin = load_documents(args.reference)
    docs = spread(pages(found, args.chunk_chars), args.max_docs)
    langs = ["und" if d.domain == "code" else sentence_language(d.text[:2000]) or "und" for d in docs]
    table = stage_table(docs, schema.DEDUP, lang=langs)
    texts = [doc.text for doc in docs]
    size = megabytes(texts)
    print(f"documents: {origin}; {len(docs)} timed ({sum(d.domain == 'code' for d in docs)} code), one core")

    cfg = PiiConfig(classifier_model=args.model)
    load_seconds, stage = cpu_time(lambda: PiiStage(cfg))
    print(f"tagger load: {load_seconds:.2f} CPU s")
    stage.process(table.slice(0, 20))  # warm caches outside the timing

    structured = list(cfg.types)
    patterns, _ = cpu_time(lambda: [find_structured(t, structured, cfg.keep_private_ips) for t in texts], args.repeat)
    whole, output = cpu_time(lambda: stage.process(table), args.repeat)
    base, naive_matches = cpu_time(lambda: naive_redact(texts), args.repeat)
    naive = Rate("naive regex set", base, len(texts), size)
    rates = [
        Rate("ours: pii patterns only", patterns, len(texts), size),
        Rate("ours: pii stage (patterns + tagger)", whole, len(texts), size),
        naive,
    ]
    print_rates("PII detection and redaction", rates, naive)
    ours_matches = sum(output.kept["pii_count"].to_pylist() + output.dropped["pii_count"].to_pylist())
    print(
        f"matches: ours {ours_matches} ({', '.join(f'{k}={int(v)}' for k, v in output.stats.items())}), "
        f"naive {naive_matches}; dropped {output.dropped.num_rows} documents"
    )


if __name__ == "__main__":
    main()
