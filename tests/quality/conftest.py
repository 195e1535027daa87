"""Real text for the quality tests: the Debian Administrator's Handbook in English, French and Chinese (prose, with
its page navigation as real boilerplate) and Python's standard library (code), plus PII-schema shard builders."""

from __future__ import annotations

import functools
import html.parser
import random
import re
import sysconfig
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest

from pretrain_core import schema, storage

HANDBOOK = Path("/usr/share/doc/debian-handbook/html")
STDLIB = Path(sysconfig.get_paths()["stdlib"])
HAN = re.compile(r"[\u4e00-\u9fff]")


class _HandbookPage(html.parser.HTMLParser):
    """Collects the text of `<div class="para">` blocks and the labels of the `<ul class="docnav">` navigation."""

    def __init__(self) -> None:
        super().__init__()
        self.paragraphs: list[str] = []
        self.navigation: list[str] = []
        self._depth = 0
        self._in_nav = False
        self._in_label = False
        self._buffer: list[str] = []
        self._labels: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "div" and (self._depth or ("class", "para") in attrs):
            self._depth += 1
        if tag == "ul" and ("class", "docnav") in attrs:
            self._in_nav = True
        self._in_label = self._in_nav and tag == "strong"

    def handle_endtag(self, tag: str) -> None:
        if tag == "div" and self._depth:
            self._depth -= 1
            if not self._depth:
                self.paragraphs.append(" ".join("".join(self._buffer).split()))
                self._buffer = []
        if tag == "strong":
            self._in_label = False
        if tag == "ul" and self._in_nav:
            self._in_nav = False
            self.navigation.append(" ".join(self._labels))
            self._labels = []

    def handle_data(self, data: str) -> None:
        if self._depth:
            self._buffer.append(data)
        elif self._in_label:
            self._labels.append(data.strip())


@functools.cache
def _read_handbook(locale: str) -> tuple[list[str], list[str]]:
    folder = HANDBOOK / locale
    if not folder.is_dir():
        pytest.skip(f"the Debian handbook ({folder}) is not installed")
    paragraphs, navigation = [], []
    for page in sorted(folder.glob("*.html")):
        parser = _HandbookPage()
        parser.feed(page.read_text(encoding="utf-8"))
        paragraphs += [p for p in parser.paragraphs if p]
        navigation += [n for n in parser.navigation if n]
    if locale.startswith("zh"):  # untranslated paragraphs stay English: keep the Chinese ones
        paragraphs = [p for p in paragraphs if len(HAN.findall(p)) > 0.3 * len(p)]
    return paragraphs, navigation


@pytest.fixture(scope="session")
def english() -> list[str]:
    return _read_handbook("en-US")[0]


@pytest.fixture(scope="session")
def chinese() -> list[str]:
    return _read_handbook("zh-CN")[0]


@pytest.fixture(scope="session")
def french() -> list[str]:
    return [p for p in _read_handbook("fr-FR")[0] if " le " in p or " la " in p or " les " in p]


@pytest.fixture(scope="session")
def navigation() -> dict[str, list[str]]:
    """Each page's navigation labels ("Prev Up Home Next"): boilerplate a crawler keeps when extraction fails."""
    return {"en": _read_handbook("en-US")[1], "zh": _read_handbook("zh-CN")[1]}


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
