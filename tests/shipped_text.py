"""Real text the repository ships, for fixtures. Tests read these (and the Python installation), never the
host's documentation: the same commit then gives the same result on every machine (`tests/test_hermetic.py`)."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
REFERENCE = REPO_ROOT / "data" / "reference"
LICENCES = REFERENCE / "licences"  # Debian's common-licenses
VIM_TUTOR = REFERENCE / "vim-tutor"  # en, de, fr, ja, zh_cn
VIM_TUTOR_TRADITIONAL = REFERENCE / "vim-tutor-traditional"  # zh, zh_tw: the same file twice, as vim ships it
CJK_TEXTS = REFERENCE / "cjkencodings"
COREUTILS_MAN1 = REFERENCE / "coreutils-man1"  # troff sources of seven coreutils manual pages
DEMO = REPO_ROOT / "pretrain_core" / "data" / "demo"
MANUAL_PAGES = DEMO / "text" / "manpages"  # rendered text, one directory per language


def manual_pages(language: str, limit: int) -> list[Path]:
    """The first ``limit`` rendered manual pages of a language in the demo corpus (en, de, fr, es, ja, ru, zh_CN)."""
    pages = sorted((MANUAL_PAGES / language).rglob("*.txt"))
    assert pages, f"no manual pages for {language!r} under {MANUAL_PAGES}"
    return pages[:limit]


def vim_tutor(language: str) -> Path:
    """Vim's tutor in a language ('utf-8' suffix left out): 'de', 'zh_cn', 'zh_tw' ..."""
    name = f"tutor.{language}.utf-8"
    return next((d / name for d in (VIM_TUTOR, VIM_TUTOR_TRADITIONAL) if (d / name).is_file()), VIM_TUTOR / name)
