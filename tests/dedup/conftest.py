"""Real text for the dedup tests: licences, man pages and the Chinese vim tutor, plus edits a crawler would see."""

from __future__ import annotations

import gzip
import random
from collections.abc import Callable, Sequence
from pathlib import Path

import pyarrow as pa
import pytest

from pretrain_core import schema, storage
from tests.shipped_text import COREUTILS_MAN1, LICENCES, vim_tutor

Doc = tuple[str, str, str]  # id, text, domain


@pytest.fixture(scope="session")
def licence() -> Callable[[str], str]:
    def read(name: str) -> str:
        return (LICENCES / name).read_text(encoding="utf-8")

    return read


@pytest.fixture(scope="session")
def man_page() -> Callable[[str], str]:
    def read(name: str) -> str:
        with gzip.open(COREUTILS_MAN1 / f"{name}.1.gz", "rt", encoding="utf-8") as handle:
            return handle.read()

    return read


@pytest.fixture(scope="session")
def tutor() -> Callable[[str], str]:
    def read(language: str) -> str:
        return vim_tutor(language).read_text(encoding="utf-8")

    return read


def _edit(text: str, fraction: float, donor: str, seed: int, run: int, sep: str) -> str:
    units = text.split() if sep == " " else list(text)
    source = donor.split() if sep == " " else list(donor)
    rng = random.Random(seed)
    slots = range(0, len(units) - run, run)
    for start in rng.sample(slots, max(1, round(len(units) * fraction / run))):
        offset = rng.randrange(len(source) - run)
        units[start : start + run] = source[offset : offset + run]
    return sep.join(units)


@pytest.fixture(scope="session")
def edit_words() -> Callable[..., str]:
    """Rewrite ``fraction`` of a text's words in runs of ``run`` words taken from ``donor`` (a reworded phrase
    here and there, as between two crawls of one page)."""

    def edit(text: str, fraction: float, donor: str, seed: int = 0, run: int = 10) -> str:
        return _edit(text, fraction, donor, seed, run, " ")

    return edit


@pytest.fixture(scope="session")
def edit_chars() -> Callable[..., str]:
    """The same for text without spaces: runs of ``run`` characters replaced."""

    def edit(text: str, fraction: float, donor: str, seed: int = 0, run: int = 10) -> str:
        return _edit(text, fraction, donor, seed, run, "")

    return edit


@pytest.fixture
def write_clean_shards(tmp_path: Path) -> Callable[..., list[str]]:
    """Write documents as CLEAN shards (round-robin over ``shards`` files) and return their URLs."""

    def write(docs: Sequence[Doc], shards: int = 2, root: str | None = None) -> list[str]:
        base = root or str(tmp_path / "clean" / "data")
        urls = []
        for k in range(shards):
            rows = [
                {
                    "id": i,
                    "text": t,
                    "source": "test",
                    "domain": d,
                    "licence": "MIT",
                    "location": f"{k}:{n}",
                    "code_language": None,
                    "lang": "en",
                    "lang_score": 1.0,
                }
                for n, (i, t, d) in enumerate(docs[k::shards])
            ]
            url = storage.join(base, f"part-{k:05d}.parquet")
            storage.write_parquet(url, pa.Table.from_pylist(rows, schema=schema.CLEAN))
            urls.append(url)
        return urls

    return write
