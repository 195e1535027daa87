from __future__ import annotations

import shutil
from pathlib import Path

import fsspec
import pytest

from pretrain_core import storage
from pretrain_core.ingest.config import SourceConfig
from pretrain_core.ingest.listing import list_source_files, relative_path, source_base


def _source(path: str, **extra: object) -> SourceConfig:
    return SourceConfig(name="s", domain="general", format="text", path=path, **extra)  # type: ignore[arg-type]


def _tree(root: Path, licenses: Path) -> Path:
    copies = {"gpl/GPL-3": "GPL-3", "gpl/GPL-2": "GPL-2", "apache/Apache-2.0": "Apache-2.0", "bsd/BSD": "BSD"}
    for rel, name in {**copies, ".git/config": "BSD"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(licenses / name, root / rel)
    return root


def test_directory_lists_files_sorted_relative_and_skips_hidden(tmp_path: Path, licenses: Path) -> None:
    root = _tree(tmp_path / "corpus", licenses)
    files = list_source_files(_source(str(root)))
    assert [f.rel for f in files] == ["apache/Apache-2.0", "bsd/BSD", "gpl/GPL-2", "gpl/GPL-3"]
    assert files[0].url == str(root / "apache/Apache-2.0") and files[0].size == (licenses / "Apache-2.0").stat().st_size
    with_hidden = list_source_files(_source(str(root), include_hidden=True))
    assert with_hidden[0].rel == ".git/config"


def test_glob_is_relative_to_the_part_before_the_wildcard(tmp_path: Path, licenses: Path) -> None:
    root = _tree(tmp_path / "corpus", licenses)
    files = list_source_files(_source(f"{root}/**/GPL-*"))
    assert [f.rel for f in files] == ["gpl/GPL-2", "gpl/GPL-3"]
    assert source_base(_source(f"{root}/g*/GPL-*")) == str(root)
    assert [f.rel for f in list_source_files(_source(f"{root}/g*"))] == ["gpl/GPL-2", "gpl/GPL-3"]  # dirs expand


def test_single_file_is_relative_to_its_folder(licenses: Path) -> None:
    (file,) = list_source_files(_source(str(licenses / "GPL-3")))
    assert file.rel == "GPL-3"
    assert relative_path(source_base(_source(str(licenses / "GPL-3"))), file.url) == "GPL-3"


def test_relative_paths_resolve_from_the_current_directory(
    tmp_path: Path, licenses: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path / "corpus", licenses)
    monkeypatch.chdir(tmp_path)
    files = list_source_files(_source("corpus/gpl"))
    assert [(f.rel, f.url) for f in files] == [
        ("GPL-2", str(tmp_path / "corpus/gpl/GPL-2")),
        ("GPL-3", str(tmp_path / "corpus/gpl/GPL-3")),
    ]


def test_memory_urls_round_trip(licenses: Path) -> None:
    fs = fsspec.filesystem("memory")
    fs.pipe("/listing-test/docs/a/GPL-3", (licenses / "GPL-3").read_bytes())
    fs.pipe("/listing-test/docs/BSD", (licenses / "BSD").read_bytes())
    source = _source("memory://listing-test/docs")
    files = list_source_files(source)
    assert [f.rel for f in files] == ["BSD", "a/GPL-3"]
    assert storage.read_bytes(files[1].url) == (licenses / "GPL-3").read_bytes()
    assert relative_path(source_base(source), files[1].url) == "a/GPL-3"
    fs.rm("/listing-test", recursive=True)


def test_missing_or_empty_sources_and_foreign_files_are_errors(tmp_path: Path, licenses: Path) -> None:
    with pytest.raises(FileNotFoundError, match="nothing at"):
        list_source_files(_source(str(tmp_path / "nope")))
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="holds no files"):
        list_source_files(_source(str(tmp_path / "empty")))
    with pytest.raises(FileNotFoundError, match="holds no files"):
        list_source_files(_source(f"{tmp_path}/*.jsonl"))
    with pytest.raises(ValueError, match="not under the source base"):
        relative_path(source_base(_source(str(tmp_path / "empty"))), str(licenses / "GPL-3"))
