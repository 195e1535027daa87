"""Real text for the quality tests, all shipped in the repo: Debian Administrator's Handbook and Debian FAQ
paragraphs in English, French and Chinese, the handbook's navigation labels (real boilerplate), Python's standard
library (code), plus PII-schema shard builders."""

from __future__ import annotations

import functools
import gzip
import json
import random
import re
import sysconfig
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pretrain_core import schema, storage
from pretrain_core.quality.reference import shipped_reference
from tests.shipped_text import DEMO

DATA = Path(__file__).resolve().parents[2] / "data"
HANDBOOK_PAGES = DEMO / "specialist" / "debian_handbook.parquet"
LABELLED = DATA / "labelled" / "quality"
STDLIB = Path(sysconfig.get_paths()["stdlib"])
HAN = re.compile(r"[\u4e00-\u9fff]")
CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
SENTENCE_END = tuple(".:!?)。：！？）")
# How scripts/build_labelled_quality.py joins the labels of a menu line in its `boilerplate` items.
MENU_SEPARATOR = re.compile(r" \| | › | · |  ")


def _is_english(line: str) -> bool:
    """English lines come from every locale's pages: a Japanese page's line may mix in Japanese."""
    return len(line) >= 80 and " the " in line and not CJK.search(line)


def _is_french(line: str) -> bool:
    return len(line) >= 80 and any(word in line for word in (" le ", " la ", " les "))


def _is_chinese(line: str) -> bool:
    """Untranslated paragraphs of the Chinese pages stay English: keep the Chinese ones."""
    return len(line) >= 20 and len(HAN.findall(line)) > 0.3 * len(line)


IS_PARAGRAPH = {"en": _is_english, "fr": _is_french, "zh": _is_chinese}


@functools.cache
def _labelled_items() -> tuple[dict[str, Any], ...]:
    """The labelled quality set: its reference text, then its eval items (data/labelled/quality/README.md)."""
    items: list[dict[str, Any]] = []
    for path in (shipped_reference("prose"), LABELLED / "eval.jsonl.gz"):
        with gzip.open(path, "rt", encoding="utf-8") as lines:
            items += [json.loads(line) for line in lines]
    return tuple(items)


def _labelled_lines(lang: str, source: str) -> list[str]:
    """Lines of the labelled set's real chunks (reference and `good` items): one paragraph per line."""
    items = _labelled_items()
    chunks = [i["text"] for i in items if (i["lang"], i["source"], i.get("kind", "good")) == (lang, source, "good")]
    return [line for chunk in chunks for line in chunk.split("\n")]


def _handbook_page_lines(lang: str) -> list[str]:
    """Lines of the demo corpus's handbook pages (one block per line) of the locale; for English of every locale, as
    translations are partial and their untranslated paragraphs are English."""
    table = pq.read_table(HANDBOOK_PAGES, columns=["lang", "text"])
    pages = zip(table.column("lang").to_pylist(), table.column("text").to_pylist(), strict=True)
    return [line for page_lang, text in pages if lang in ("en", page_lang) for line in text.split("\n")]


@functools.cache
def _paragraphs(lang: str) -> list[str]:
    """Handbook paragraphs (the demo pages', then the labelled set's), then the labelled set's Debian FAQ ones, each
    once. The demo pages also keep headings, commands and program output as lines: a paragraph is a long line in
    the language that ends a sentence."""
    lines = _handbook_page_lines(lang) + _labelled_lines(lang, "handbook") + _labelled_lines(lang, "faq")
    return [line for line in dict.fromkeys(lines) if line.endswith(SENTENCE_END) and IS_PARAGRAPH[lang](line)]


@pytest.fixture(scope="session")
def english() -> list[str]:
    return _paragraphs("en")


@pytest.fixture(scope="session")
def chinese() -> list[str]:
    return _paragraphs("zh")


@pytest.fixture(scope="session")
def french() -> list[str]:
    return _paragraphs("fr")


def _menus(page: str) -> set[tuple[str, ...]]:
    """The labels of each menu line of a labelled `boilerplate` page, less its first and last lines: a header and a
    footer that the set's builder wrote."""
    lines = page.split("\n")[1:-1]
    return {tuple(MENU_SEPARATOR.split(line)) for line in lines if MENU_SEPARATOR.search(line)}


def _navigation(lang: str) -> list[str]:
    """The handbook's real navigation labels, once per labelled `boilerplate` page: the one menu all of them share."""
    pages = [i["text"] for i in _labelled_items() if (i["lang"], i.get("kind")) == (lang, "boilerplate")]
    (labels,) = set.intersection(*map(_menus, pages))
    return [" ".join(labels)] * len(pages)


@pytest.fixture(scope="session")
def navigation() -> dict[str, list[str]]:
    """Each page's navigation labels ("Home Next Prev Up"): boilerplate a crawler keeps when extraction fails."""
    return {"en": _navigation("en"), "zh": _navigation("zh")}


@pytest.fixture(scope="session")
def python_files() -> list[str]:
    files = sorted(p for p in (STDLIB / "email").rglob("*.py") if p.stat().st_size > 2000)
    files += sorted(p for p in (STDLIB / "json").glob("*.py"))
    return [p.read_text(encoding="utf-8") for p in files]


def _documents(paragraphs: list[str], per_doc: int) -> list[str]:
    return ["\n".join(paragraphs[i : i + per_doc]) for i in range(0, len(paragraphs) - per_doc + 1, per_doc)]


def _word_salad(text: str, seed: int) -> str:
    rng = random.Random(seed)
    lines = []
    for line in text.split("\n"):
        units = list(line) if HAN.search(line) else line.split()
        rng.shuffle(units)
        lines.append(("" if HAN.search(line) else " ").join(units))
    return "\n".join(lines)


@pytest.fixture(scope="session")
def as_documents() -> Callable[[list[str], int], list[str]]:
    """Consecutive paragraphs joined into documents, one paragraph per line."""
    return _documents


@pytest.fixture(scope="session")
def word_salad() -> Callable[[str, int], str]:
    """The same words (characters for Chinese), shuffled within each line: every token real, the order not."""
    return _word_salad


@pytest.fixture
def pii_table() -> Callable[..., pa.Table]:
    """Build a PII-schema table from (id, text, domain, lang, source, code_language) rows."""

    def build(rows: list[tuple[str, str, str, str, str, str | None]]) -> pa.Table:
        n = len(rows)
        columns = {
            "id": [r[0] for r in rows],
            "text": [r[1] for r in rows],
            "source": [r[4] for r in rows],
            "domain": [r[2] for r in rows],
            "licence": ["MIT"] * n,
            "location": [f"test#{i}" for i in range(n)],
            "code_language": [r[5] for r in rows],
            "lang": [r[3] for r in rows],
            "lang_score": [0.99] * n,
            "dup_cluster": [r[0] for r in rows],
            "dup_cluster_size": [1] * n,
            "pii_count": [0] * n,
            "pii_types": [[] for _ in range(n)],
        }
        return schema.validate(pa.table(columns, schema=schema.PII), schema.PII, "test")

    return build


@pytest.fixture
def write_shards(tmp_path: Path) -> Callable[[list[pa.Table]], list[str]]:
    def write(tables: list[pa.Table]) -> list[str]:
        urls = [str(tmp_path / "in" / f"part-{i:05d}.parquet") for i in range(len(tables))]
        for url, table in zip(urls, tables, strict=True):
            storage.write_parquet(url, table)
        return urls

    return write
