"""A planted-contamination fixture from shipped text: evaluation items are paragraphs of Vim's tutor (en, de, fr, ja,
zh; not in the demo corpus), training documents are the demo corpus's JSONL and Parquet documents, and some of
those get an item (whole, or a window of it re-cased and re-punctuated) pasted in at a seeded place."""

from __future__ import annotations

import gzip
import json
import re
from dataclasses import dataclass

import numpy as np
import pyarrow.parquet as pq

from tests.shipped_text import DEMO, vim_tutor

TUTORS = ("", "de", "fr", "ja", "zh_cn")  # "" is the English tutor
_PARAGRAPH = re.compile(r"\n\s*\n")


def tutor_items(min_chars: int = 120) -> list[str]:
    """Paragraphs of the tutors long enough to hold several n-grams, each once."""
    items: list[str] = []
    for language in TUTORS:
        path = vim_tutor(language) if language else vim_tutor("").with_name("tutor.utf-8")
        for paragraph in _PARAGRAPH.split(path.read_text(encoding="utf-8")):
            text = paragraph.strip()
            if len(text) >= min_chars and text not in items and "~~~" not in text:
                items.append(text)
    return items


def demo_documents() -> list[str]:
    """The demo corpus's JSONL and Parquet documents' texts (about 3,500)."""
    texts: list[str] = []
    for path in sorted((DEMO / "general").glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as lines:
            texts += [json.loads(line)["text"] for line in lines if line.strip()]
    for path in sorted((DEMO / "specialist").glob("*.parquet")):
        texts += pq.read_table(path, columns=["text"]).column("text").to_pylist()
    return texts


@dataclass(frozen=True)
class Planted:
    texts: list[str]
    contaminated: dict[int, int]  # document row -> the item planted in it
    inserted: dict[int, str]  # document row -> the text pasted in


def plant(documents: list[str], items: list[str], count: int, seed: int, rows: list[int] | None = None) -> Planted:
    """``count`` documents each given one item: even plantings paste the whole item, odd ones a window of it,
    upper-cased with its spaces doubled and a comma after each of its first words (normalisation must undo all
    three). ``rows``: the documents that may be chosen (default: all)."""
    rng = np.random.default_rng(seed)
    chosen = rng.choice(rows if rows is not None else len(documents), size=count, replace=False)
    texts = list(documents)
    contaminated, inserted = {}, {}
    for k, row in enumerate(chosen.tolist()):
        item_index = int(rng.integers(len(items)))
        item = items[item_index]
        pasted = item if k % 2 == 0 else _window(item, rng).upper().replace(" ", "  ").replace("  ", ", ", 3)
        at = int(rng.integers(len(texts[row]) + 1))
        while at < len(texts[row]) and not texts[row][at - 1 : at].isspace() and at > 0:
            at += 1  # paste between words, not inside one
        texts[row] = f"{texts[row][:at]}\n{pasted}\n{texts[row][at:]}"
        contaminated[row], inserted[row] = item_index, pasted
    return Planted(texts, contaminated, inserted)


def _window(item: str, rng: np.random.Generator) -> str:
    """30 words of an item, the whole of one with fewer (over 120 characters: about 20 words), or a stretch of one
    written mostly without spaces holding 20 of its CJK characters."""
    words = item.split()
    if len(words) >= 30:
        start = int(rng.integers(len(words) - 29))
        return " ".join(words[start : start + 30])
    if len(words) >= 15:
        return item
    han = [i for i, char in enumerate(item) if ord(char) >= 0x3000]
    start = int(rng.integers(max(len(han) - 19, 1)))
    return item[han[start] : han[min(start + 19, len(han) - 1)] + 1]
