"""A corpus of any size built from the demo corpus the repo ships, with real work for every stage.

Replica 0 is the demo corpus as ingest hands it on. Every further replica holds, for each demo document (seeded per
replica and document):
- with probability `NEAR_SHARE`, a near-duplicate: the document with `NEAR_EDIT` of its words replaced by other
  words of the same document (dedup must find and drop it);
- otherwise a new document: the first part of the document joined to the second part of another document of the
  same source and language (fluent text of that language, far from both under any shingling), with
  `DISTINCT_EDIT` of its words replaced.
Prose goes to one JSONL.gz file per source and replica (ingest makes one shard of each, so shards stay the demo's
size whatever the scale); code to a tree of source files per replica (its language from the
extension, as the code reader finds it). No host files: only the package's demo corpus is read.

    python benchmarks/scale_corpus.py OUT --scale 16        # 16 x the demo corpus (about 140 MB of text)
    python benchmarks/scale_corpus.py OUT --scale 120       # past 1 GB
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import zlib
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import yaml
from corpus import Document, demo_documents_by_source

from pretrain_core.ingest.languages import EXTENSIONS, FILE_NAMES

NEAR_SHARE = 0.25
NEAR_EDIT = 0.02  # far above a Jaccard of 0.8 on word 5-grams: a near-duplicate
DISTINCT_EDIT = 0.01
_TOKEN = re.compile(r"\s+|[^\s]+")
_UNSPACED = 0.05  # below this share of whitespace a text is edited character by character (Chinese, Japanese)


def _units(text: str) -> list[str]:
    """Words and the whitespace between them, or characters for text written without spaces."""
    spaces = sum(c.isspace() for c in text)
    return list(text) if spaces < _UNSPACED * max(len(text), 1) else _TOKEN.findall(text)


def substituted(text: str, share: float, rng: random.Random) -> str:
    """`text` with `share` of its words (characters, for unspaced scripts) replaced by others of the same text."""
    units = _units(text)
    words = [i for i, u in enumerate(units) if not u.isspace()]
    if len(words) < 2:
        return text
    for i in rng.sample(words, max(1, round(share * len(words)))):
        units[i] = units[rng.choice(words)]
    return "".join(units)


def spliced(first: str, second: str, rng: random.Random) -> str:
    """The first part of one text and the second part of another, each cut near a random point in its middle."""
    return f"{first[: _cut(first, rng)]}\n\n{second[_cut(second, rng) :].lstrip()}"


def _cut(text: str, rng: random.Random) -> int:
    """A cut point between 35 % and 65 % of the text, moved to the next space where there is one."""
    point = int(len(text) * rng.uniform(0.35, 0.65))
    space = text.find(" ", point)
    return space if space >= 0 else point


def replica(docs: Sequence[tuple[str, Document]], number: int) -> list[str]:
    """The texts of replica `number` (0: the documents themselves), aligned with `docs`."""
    if number == 0:
        return [doc.text for _, doc in docs]
    by_source: dict[str, list[int]] = defaultdict(list)
    for index, (source, _) in enumerate(docs):
        by_source[source].append(index)
    texts = []
    for index, (source, doc) in enumerate(docs):
        rng = random.Random(zlib.crc32(f"scale/{number}/{index}".encode()))
        if rng.random() < NEAR_SHARE:
            texts.append(substituted(doc.text, NEAR_EDIT, rng))
            continue
        other = docs[rng.choice(by_source[source])][1].text
        texts.append(substituted(spliced(doc.text, other, rng), DISTINCT_EDIT, rng))
    return texts


def _code_name(language: str | None, index: int) -> str:
    """A file name the code reader gives `language` (an extension, or a well-known name in its own directory)."""
    for extension, known in EXTENSIONS.items():
        if known == language:
            return f"{index:07d}{extension}"
    name = next(n for n, known in FILE_NAMES.items() if known == language)
    return f"{index:07d}/{name}"


def build(out: Path, scale: int) -> Path:
    """Write `scale` replicas of the demo corpus under `out`, one file (so one ingest shard) per source and
    replica; return its sources file."""
    docs = demo_documents_by_source()
    domains: dict[str, str] = {}
    for number in range(scale):
        prose: dict[str, list[dict[str, str]]] = defaultdict(list)
        for index, ((source, doc), text) in enumerate(zip(docs, replica(docs, number), strict=True)):
            if doc.domain == "code":
                path = out / "code" / f"{number:04d}" / _code_name(doc.code_language, index)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
                continue
            domains[source] = doc.domain
            prose[source].append({"id": f"{number}-{index}", "text": text})
        for source, records in prose.items():
            path = out / domains[source] / source / f"{number:04d}.jsonl.gz"
            path.parent.mkdir(parents=True, exist_ok=True)
            lines = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
            path.write_bytes(gzip.compress(lines.encode(), compresslevel=1, mtime=0))
    listed = [
        {"name": source, "domain": domain, "format": "jsonl", "path": str(out / domain / source), "id_field": "id"}
        for source, domain in sorted(domains.items())
    ]
    listed.append({"name": "code", "domain": "code", "format": "code", "path": str(out / "code")})
    sources_file = out / "sources.yaml"
    sources_file.write_text(yaml.safe_dump(listed, sort_keys=False), encoding="utf-8")
    return sources_file


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path, help="directory to write the corpus and its sources.yaml into")
    parser.add_argument("--scale", type=int, default=1, help="replicas of the demo corpus (default 1)")
    args = parser.parse_args()
    print(build(args.out, args.scale))


if __name__ == "__main__":
    main()
