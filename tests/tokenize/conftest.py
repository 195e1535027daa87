"""Real text for the tokenizer and packing tests: Python's own sources (code), licence texts (specialist),
manual pages and Chinese reference texts (general), written as QUALITY-schema shards."""

from __future__ import annotations

import hashlib
import sysconfig
from collections.abc import Callable
from pathlib import Path

import faker
import pytest

from pretrain_core import storage
from pretrain_core.tokenize.config import TokenizerConfig
from pretrain_core.tokenize.train import fit_tokenizer
from tests.quality_tables import quality_table
from tests.shipped_text import LICENCES, manual_pages

STDLIB = Path(sysconfig.get_paths()["stdlib"])

CODE_FILES = [STDLIB / name for name in ("textwrap.py", "json/decoder.py", "json/encoder.py", "shlex.py", "csv.py")]
CODE_FILES += [STDLIB / "ctypes/macholib/fetch_macholib.bat"]  # CRLF line ends
CODE_FILES += [Path(sysconfig.get_makefile_filename())]  # tab-indented recipes
SPECIALIST_FILES = [STDLIB / "LICENSE.txt"]
SPECIALIST_FILES += [LICENCES / "Apache-2.0", LICENCES / "MPL-2.0"]
GENERAL_FILES = [STDLIB / "test/cjkencodings" / name for name in ("gb2312-utf8.txt", "big5-utf8.txt")]
GENERAL_FILES += [Path(faker.__file__).parent / "providers/lorem/zh_CN/__init__.py"]  # always installed
GENERAL_FILES += manual_pages("zh_CN", 2) + manual_pages("en", 20)


def read_documents(paths: list[Path], domain: str, chunk_chars: int = 1500, per_file: int = 30) -> list[dict[str, str]]:
    """Each existing file cut at blank lines into up to ``per_file`` documents of about ``chunk_chars``."""
    docs = []
    for path in paths:
        if not path.is_file():
            continue
        text = path.read_bytes().decode("utf-8", errors="replace")
        chunks = [""]
        for paragraph in text.split("\n\n"):
            chunks[-1] = f"{chunks[-1]}\n\n{paragraph}" if chunks[-1] else paragraph
            if len(chunks[-1]) >= chunk_chars:
                chunks.append("")
        docs += [_document(path, domain, i, chunk) for i, chunk in enumerate(chunks[:per_file]) if chunk.strip()]
    return docs


def _document(path: Path, domain: str, index: int, text: str) -> dict[str, str]:
    location = f"{path}#{index}"
    return {
        "id": hashlib.sha1(location.encode()).hexdigest()[:16],
        "text": text,
        "domain": domain,
        "location": location,
    }


@pytest.fixture(scope="session")
def documents() -> list[dict[str, str]]:
    docs = read_documents(GENERAL_FILES, "general")
    docs += read_documents(SPECIALIST_FILES, "specialist")
    docs += read_documents(CODE_FILES, "code")
    assert {d["domain"] for d in docs} == {"general", "specialist", "code"}
    return docs


def write_quality_shards(docs: list[dict[str, str]], root: Path, n_shards: int) -> list[str]:
    """Documents dealt round-robin over ``n_shards`` shards, so every shard holds every domain."""
    urls = []
    for shard in range(n_shards):
        url = str(root / f"part-{shard:05d}.parquet")
        storage.write_parquet(url, quality_table(docs[shard::n_shards]))
        urls.append(url)
    return urls


@pytest.fixture(scope="session")
def shard_writer() -> Callable[[list[dict[str, str]], Path, int], list[str]]:
    return write_quality_shards


@pytest.fixture(scope="session")
def quality_shards(documents: list[dict[str, str]], tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return write_quality_shards(documents, tmp_path_factory.mktemp("quality"), 3)


@pytest.fixture(scope="session")
def tokenizer_config() -> TokenizerConfig:
    return TokenizerConfig(vocab_size=1200, max_training_chars=400_000)


@pytest.fixture(scope="session")
def tokenizer_artifacts(
    quality_shards: list[str], tokenizer_config: TokenizerConfig, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, str]:
    return fit_tokenizer(quality_shards, tokenizer_config, str(tmp_path_factory.mktemp("tokenizer")))
