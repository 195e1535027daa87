"""The data card of a real (small) build: its figures agree with what the build wrote, it is made from manifests and
per-shard counts alone, the HTML holds every section and inlines its figures, dropped examples are redacted, and
--compare names what changed between two builds."""

from __future__ import annotations

import os
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from pretrain_cli.main import main
from pretrain_core import storage
from pretrain_core.card.collect import DataCard, card_folder, collect_card, dropped_examples
from pretrain_core.card.compare import compare_cards, load_card
from pretrain_core.card.plots import FIGURES
from pretrain_core.card.render import SECTIONS, render_html, write_card
from pretrain_core.config import PipelineConfig, load_config
from pretrain_core.pipeline import CORPUS_STAGES, CorpusPipeline
from tests.conftest import write_small_config

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _build(folder: Path, overrides: list[str] | None = None) -> PipelineConfig:
    cfg = load_config(write_small_config(folder), overrides or [])
    pipeline = CorpusPipeline(cfg)
    for name in CORPUS_STAGES:
        pipeline.run_stage(name)
    return cfg


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> tuple[PipelineConfig, DataCard]:
    cfg = _build(tmp_path_factory.mktemp("card"))
    return cfg, collect_card(cfg)


def test_the_card_agrees_with_what_the_build_wrote(build: tuple[PipelineConfig, DataCard]) -> None:
    cfg, card = build
    pipeline = CorpusPipeline(cfg)
    manifests = {name: pipeline.finished(name) for name in CORPUS_STAGES}
    assert [(s.name, s.docs_in, s.docs_out) for s in card.stages] == [
        (name, m.docs_in, m.docs_out) for name, m in manifests.items() if m is not None
    ]
    assert {s.name: s.licence for s in card.sources} == {s.name: s.licence for s in cfg.sources}
    shards = storage.list_files(storage.join(pipeline.root("tokenize"), "data"), ".parquet")
    packed = {
        lic for url in shards for row in storage.read_parquet(url, ["licences"])["licences"].to_pylist() for lic in row
    }
    assert set(card.tokens_by_licence) == packed  # every licence that reached the tokens, no other
    mixture = [storage.read_parquet(url, ["licence", "n_tokens"]).to_pandas() for url in
               storage.list_files(storage.join(pipeline.root("mixture"), "data"), ".parquet")]  # fmt: skip
    realised = pd.concat(mixture).groupby("licence")["n_tokens"].sum().to_dict()
    assert card.tokens_by_licence == pytest.approx(realised)
    quality = manifests["quality"]
    assert quality is not None
    assert sum(sum(counts) for counts in card.quality_histogram.values()) == quality.docs_in  # cut ones too
    dedup = manifests["dedup"]
    assert dedup is not None and sum(card.cluster_sizes.values()) == dedup.docs_out
    assert sum(card.tokens_by_source.values()) == pytest.approx(sum(card.tokens_by_language.values()))
    assert all(1.0 < ratio < 8.0 for ratio in card.bytes_per_token.values())
    assert card.mixture["code"].target == pytest.approx(0.1)


def test_the_card_needs_no_data_shard(build: tuple[PipelineConfig, DataCard], tmp_path: Path) -> None:
    """Made from manifests and per-shard counts: the same card with every stage's data shards gone."""
    cfg, card = build
    copy = tmp_path / "root"
    shutil.copytree(cfg.storage.root, copy)
    for data in copy.glob("corpus/*/data"):
        shutil.rmtree(data)
    moved = cfg.model_copy(update={"storage": cfg.storage.model_copy(update={"root": str(copy)})})
    again = collect_card(moved)
    moved_only = {"root", "folder", "config_hash"}  # the config names its root
    assert again.model_dump(exclude=moved_only) == card.model_dump(exclude=moved_only)


class _Outline(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.headings: list[str] = []
        self.images: list[str] = []
        self._in_heading = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._in_heading = tag == "h2"
        if tag == "img":
            self.images.append(dict(attrs).get("src") or "")

    def handle_data(self, data: str) -> None:
        if self._in_heading:
            self.headings.append(data.strip())
            self._in_heading = False


def test_the_html_card_holds_every_section_and_its_figures_inline(
    build: tuple[PipelineConfig, DataCard], tmp_path: Path
) -> None:
    pytest.importorskip("matplotlib", reason="the figures are drawn with matplotlib (eval extra)")
    _, card = build
    hostile = card.model_copy(update={"name": "x<script>alert(1)</script>"})
    hostile = hostile.model_copy(update={"root": str(tmp_path), "folder": str(tmp_path / "card")})
    urls = write_card(hostile)
    page = Path(urls["html"]).read_text(encoding="utf-8")
    outline = _Outline()
    outline.feed(page)
    assert outline.headings == list(SECTIONS)
    assert len(outline.images) == len(FIGURES) and all(
        src.startswith("data:image/png;base64,") for src in outline.images
    )
    assert "<script>" not in page  # text from the build is shown, never run
    markdown = Path(urls["md"]).read_text(encoding="utf-8")
    assert all(f"## {heading}" in markdown for heading in SECTIONS)
    assert all((tmp_path / "card" / f"{name}.png").exists() for name in FIGURES)
    assert load_card(str(tmp_path)) == load_card(str(tmp_path / "card")) == hostile


# CI installs Chromium (make browser): there a missing one fails this test instead of skipping it
@pytest.mark.skipif(CHROMIUM is None and not os.environ.get("CI"), reason="no Chromium (make browser installs it)")
def test_chromium_renders_the_card(build: tuple[PipelineConfig, DataCard], tmp_path: Path) -> None:
    _, card = build
    html = tmp_path / "card.html"
    html.write_text(render_html(card, {}), encoding="utf-8")
    shot = tmp_path / "card.png"
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
    subprocess.run(
        [str(CHROMIUM), *flags, f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}",
         "--window-size=1200,2000", html.as_uri()],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    assert shot.stat().st_size > 10_000  # a rendered page, not a blank one


def test_dropped_examples_are_redacted_short_and_bounded(tmp_path: Path) -> None:
    texts = ["write to jane.doe@example.org or +1 415 555 0100 now " + "x " * 300, "another one", "third"]
    table = pa.table({"id": ["a", "b", "c"], "text": texts, "drop_reason": ["too_short"] * 3})
    storage.write_parquet(str(tmp_path / "dropped" / "s-00000.parquet"), table)
    examples = dropped_examples(str(tmp_path / "dropped"), {"too_short", "never_seen"})
    assert len(examples["too_short"]) == 2 and examples["never_seen"] == []
    first = examples["too_short"][0]
    assert "jane.doe" not in first and "<EMAIL>" in first and "555" not in first
    assert len(first) <= 201


def test_compare_names_what_changed_between_two_builds(build: tuple[PipelineConfig, DataCard], tmp_path: Path) -> None:
    """The second build refuses the licence of one source: that licence is gone, the drops appear."""
    cfg, card = build
    refused = next(s for s in cfg.sources if s.name == "fortunes_zh").licence
    assert refused is not None
    other = collect_card(_build(tmp_path, [f"ingest.licences.denied=[{refused}]"]))
    comparison = compare_cards(card, other)
    assert f"- gone from B: `{refused}`" in comparison
    assert "| ingest | licence\\_denied | 0 |" in comparison
    assert "## Token shares by source" in comparison and "fortunes\\_zh" in comparison
    for name, each in (("a", card), ("b", other)):  # the command reads what `pretrain card` wrote
        write_card(each.model_copy(update={"root": str(tmp_path / name), "folder": str(tmp_path / name / "card")}))
    review = tmp_path / "review.md"
    assert main(["card", "--compare", str(tmp_path / "a"), str(tmp_path / "b"), "--output", str(review)]) == 0
    assert review.read_text(encoding="utf-8") == comparison.replace(card.root, str(tmp_path / "a")).replace(
        other.root, str(tmp_path / "b")
    )


def test_builds_sharing_a_root_by_config_keep_a_card_each(tmp_path: Path) -> None:
    path = write_small_config(tmp_path)
    flat = load_config(path)
    shared = [load_config(path, ["storage.layout=by_config", f"pack.seq_len={n}"]) for n in (64, 128)]
    assert card_folder(flat, CorpusPipeline(flat)) == str(tmp_path / "run" / "card")
    folders = {card_folder(cfg, CorpusPipeline(cfg)) for cfg in shared}
    assert len(folders) == 2 and all(Path(f).name.startswith("card-") for f in folders)
