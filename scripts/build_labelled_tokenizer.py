#!/usr/bin/env python3
"""Build the tokenizer's extra round-trip documents: real files whose characters a tokenizer most easily loses.

The demo corpus already has Chinese, Japanese, code with tabs and CRLF line ends; what it lacks is the rest of
what real text holds: emoji (with skin tones and zero-width-joiner sequences), U+2581 (the character SentencePiece
uses for a space, as in block-character charts and in texts about tokenizers), form feeds, no-break spaces,
right-to-left scripts, rare Han characters. These come from files that Python packages of the project's environment
ship (their READMEs, as published on PyPI, and source files), from Debian's Python 3.11 (whose sources keep their
form feeds; the file is shipped in data/reference/debian-python3.11) and from CPython's CJK codec tests in
data/reference, copied whole.

Each document records where it comes from (package and version, or path), its licence, and which of the features
above it has (found in its text, not asserted). The same installed versions give byte-identical files; `--check`
rebuilds into a temporary directory and compares.

    python scripts/build_labelled_tokenizer.py          # writes data/labelled/tokenizer/
    python scripts/build_labelled_tokenizer.py --check  # rebuild and compare bytes
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from rebuild import build_or_check  # scripts/rebuild.py: scripts/ is on sys.path when run

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "data" / "labelled" / "tokenizer"
SET_FILE = "documents.jsonl"
# Debian's copy of Python 3.11 keeps the form feeds upstream CPython has dropped; the file is shipped.
DEBIAN_PYTHON = REPO_ROOT / "data" / "reference" / "debian-python3.11"

# Package READMEs (the long description in the installed metadata) and the licence each is under.
READMES = {
    "sentencepiece": "Apache-2.0",  # writes its space mark U+2581 in examples, Japanese examples
    "tqdm": "MPL-2.0 AND MIT",  # block-character progress bars
    "rich": "MIT",  # emoji, box drawing
    "charset-normalizer": "MIT",  # emoji, several scripts
    "whenever": "MIT",  # emoji
    "ruff": "MIT",  # emoji
}
# Source files of installed packages: (package, path inside it, licence).
SOURCES = (
    ("faker", "providers/emoji/__init__.py", "MIT"),  # thousands of emoji: ZWJ sequences, skin tones, flags
    ("faker", "providers/automotive/he_IL/__init__.py", "MIT"),  # CRLF line ends, Hebrew
    ("faker", "providers/date_time/ar_EG/__init__.py", "MIT"),  # Arabic
)
# (path, licence, the Debian package and version it was copied from): form feeds between sections
DEBIAN_PYTHON_FILES = (("email/mime/text.py", "PSF-2.0", "libpython3.11-minimal 3.11.2-6+deb12u9"),)
CJK_FILES = ("big5hkscs-utf8.txt", "euc_jisx0213-utf8.txt", "gb18030-utf8.txt")  # rare Han, JIS X 0213 kana

FEATURES = {
    "emoji": re.compile("[\U0001f300-\U0001faff\u2600-\u27bf]"),
    "zwj": re.compile("\u200d"),
    "astral": re.compile("[\U00010000-\U0010ffff]"),
    "u2581": re.compile("\u2581"),
    "block_chars": re.compile("[\u2580-\u259f]"),
    "crlf": re.compile("\r\n"),
    "tab": re.compile("\t"),
    "form_feed": re.compile("\f"),
    "nbsp": re.compile("\u00a0"),
    "rtl": re.compile("[\u0590-\u08ff]"),
    "cjk": re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]"),
}


@dataclass(frozen=True)
class Document:
    id: str
    origin: str
    licence: str
    text: str

    @property
    def features(self) -> list[str]:
        return [name for name, pattern in FEATURES.items() if pattern.search(self.text)]

    def row(self) -> dict[str, object]:
        return {
            "id": self.id,
            "origin": self.origin,
            "licence": self.licence,
            "features": self.features,
            "text": self.text,
        }


def _long_description(name: str) -> str:
    """An installed distribution's README: the body of its METADATA file, after the headers' blank line. Read as
    text rather than through `metadata.metadata(...).get_payload()`: once dask.distributed is imported, distributions
    are found through the importlib_metadata backport, whose message keeps the body under "Description", not as its
    payload (the builder's check failed inside the test suite, which imports Dask first)."""
    text = metadata.distribution(name).read_text("METADATA") or ""
    return text.partition("\n\n")[2]


def documents() -> list[Document]:
    docs = []
    for name, licence in READMES.items():
        readme = _long_description(name)
        if not readme.strip():
            raise SystemExit(f"{name}: no README in its installed metadata")
        docs.append(Document(f"readme-{name}", f"{name} {metadata.version(name)} README (PyPI)", licence, readme))
    for package, path, licence in SOURCES:
        files = metadata.files(package) or []
        match = next((f for f in files if f.as_posix().endswith(f"{package}/{path}")), None)
        if match is None:
            raise SystemExit(f"{package}: {path} is not installed")
        text = Path(str(match.locate())).read_bytes().decode("utf-8")
        docs.append(Document(f"{package}-{path}", f"{package} {metadata.version(package)} {path}", licence, text))
    for path, licence, package in DEBIAN_PYTHON_FILES:
        shipped = DEBIAN_PYTHON / path
        origin = f"{shipped.relative_to(REPO_ROOT).as_posix()} (copied from Debian {package})"
        text = shipped.read_bytes().decode("utf-8")
        docs.append(Document(f"cpython-{path}", origin, licence, text))
    for name in CJK_FILES:
        cjk = REPO_ROOT / "data" / "reference" / "cjkencodings" / name
        text = cjk.read_bytes().decode("utf-8")
        docs.append(Document(f"cjkencodings-{name}", cjk.relative_to(REPO_ROOT).as_posix(), "PSF-2.0", text))
    return docs


def build(out: Path) -> None:
    docs = documents()
    out.mkdir(parents=True, exist_ok=True)
    lines = "".join(json.dumps(doc.row(), ensure_ascii=False, sort_keys=True) + "\n" for doc in docs)
    (out / SET_FILE).write_text(lines, encoding="utf-8", newline="")
    table = ["| id | origin | licence | characters | features |", "| --- | --- | --- | ---: | --- |"]
    for doc in docs:
        table.append(f"| {doc.id} | {doc.origin} | {doc.licence} | {len(doc.text)} | {', '.join(doc.features)} |")
    (out / "README.md").write_text(README.format(count=len(docs), table="\n".join(table)), encoding="utf-8")


README = """\
# Tokenizer round-trip documents

{count} real documents that hold what tokenizers most easily lose: emoji (skin tones, zero-width-joiner
sequences, flags), U+2581 (SentencePiece's space mark: block-character charts, texts about tokenizers), form
feeds, no-break spaces, CRLF line ends, right-to-left scripts and rare Han characters. The tokenizer evaluation
(`pretrain_eval/stage_quality/tokenizer.py`) checks that `decode(encode(text)) == text` for each of them and for
every document of the demo corpus. `documents.jsonl` holds `id`, `origin`, `licence`, `features` (found in the
text) and `text`, each file copied whole. Rebuild with `python scripts/build_labelled_tokenizer.py` (`--check`
compares a rebuild with these files); the versions are those pinned by `constraints.txt`.

{table}
"""


def main(argv: Sequence[str] | None = None) -> int:
    return build_or_check(build, DEFAULT_OUT, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
