"""Real text for the mixture tests, sized so domains differ a lot (as they do in a real corpus): many code
documents from Python's standard library, fewer licence texts (specialist), manual pages and Chinese
reference texts (general). Written as QUALITY-schema shards; a small tokenizer is trained on them and splits are
assigned to them, as the pipeline does before the mixture."""

from __future__ import annotations

import hashlib
import sysconfig
from pathlib import Path

import faker
import pytest

from pretrain_core import storage
from pretrain_core.tokenize.config import PackConfig, TokenizerConfig
from pretrain_core.tokenize.splits import fit_splits
from pretrain_core.tokenize.train import fit_tokenizer
from tests.quality_tables import quality_table
from tests.shipped_text import LICENCES, manual_pages

STDLIB = Path(sysconfig.get_paths()["stdlib"])
SOURCES = {
    "code": sorted((STDLIB / "email").glob("*.py")) + sorted((STDLIB / "json").glob("*.py")),
    "specialist": [STDLIB / "LICENSE.txt", *sorted(LICENCES.glob("*"))],
    "general": [
        Path(faker.__file__).parent / "providers/lorem/zh_CN/__init__.py",
        STDLIB / "test/cjkencodings/gb2312-utf8.txt",
        *manual_pages("en", 40),
    ],
}


def _documents(domain: str, paths: list[Path]) -> list[dict[str, str]]:
    """Each file cut at blank lines into documents of 300-3000 characters."""
    docs: list[dict[str, str]] = []
    for path in paths:
        if not path.is_file():
            continue
        chunk = ""
        for paragraph in path.read_bytes().decode("utf-8", errors="replace").split("\n\n"):
            chunk = f"{chunk}\n\n{paragraph}" if chunk else paragraph
            if len(chunk) >= 300 + (len(docs) * 37) % 2700:  # sizes spread deterministically over 300-3000
                location = f"{path}#{len(docs)}"
                doc_id = hashlib.sha1(location.encode()).hexdigest()[:16]
                docs.append({"id": doc_id, "text": chunk, "domain": domain, "location": location})
                chunk = ""
    return docs


@pytest.fixture(scope="session")
def documents() -> list[dict[str, str]]:
    docs = [doc for domain, paths in SOURCES.items() for doc in _documents(domain, paths)]
    assert {d["domain"] for d in docs} == set(SOURCES)
    return docs


@pytest.fixture(scope="session")
def quality_shards(documents: list[dict[str, str]], tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Four shards, documents dealt round-robin."""
    root = tmp_path_factory.mktemp("quality")
    urls = [str(root / f"part-{shard:05d}.parquet") for shard in range(4)]
    for shard, url in enumerate(urls):
        storage.write_parquet(url, quality_table(documents[shard::4]))
    return urls


@pytest.fixture(scope="session")
def tokenizer_url(quality_shards: list[str], tmp_path_factory: pytest.TempPathFactory) -> str:
    cfg = TokenizerConfig(vocab_size=1000, max_training_chars=300_000)
    return fit_tokenizer(quality_shards, cfg, str(tmp_path_factory.mktemp("tokenizer")))["tokenizer"]


@pytest.fixture(scope="session")
def splits_url(quality_shards: list[str], tmp_path_factory: pytest.TempPathFactory) -> str:
    """The default assignment: 2% + 2% of each domain held out, at least two documents each."""
    return fit_splits(quality_shards, PackConfig(), str(tmp_path_factory.mktemp("splits")))["splits"]
