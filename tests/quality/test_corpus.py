"""The fit's pass over the input: populations, reference restricted to the configured domains and sources,
budgets honoured, and samples that do not depend on how the documents are split into shards."""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa

from pretrain_core.quality.config import QualityConfig, ReferenceConfig
from pretrain_core.quality.corpus import scan_corpus

Rows = list[tuple[str, str, str, str, str, str | None]]


def _rows(english: list[str], chinese: list[str], python_files: list[str]) -> Rows:
    rows: Rows = [(f"en-{i}", t, "general", "en", "encyclopedia", None) for i, t in enumerate(english[:120])]
    rows += [(f"web-{i}", t, "general", "en", "crawl", None) for i, t in enumerate(english[120:200])]
    rows += [(f"zh-{i}", t, "general", "zh", "encyclopedia", None) for i, t in enumerate(chinese[:60])]
    rows += [(f"py-{i}", t, "code", "en", "stdlib", "python") for i, t in enumerate(python_files[:20])]
    return rows


def test_populations_reference_and_cutoff_samples(
    english: list[str],
    chinese: list[str],
    python_files: list[str],
    pii_table: Callable[..., pa.Table],
    write_shards: Callable[[list[pa.Table]], list[str]],
) -> None:
    rows = _rows(english, chinese, python_files)
    cfg = QualityConfig(
        prose_reference=ReferenceConfig(urls=["self"], domains=["general"], sources=["encyclopedia"], max_chars=20_000),
        code_reference=ReferenceConfig(urls=["self"], domains=["code"]),
        cutoff_sample_docs=50,
    )
    corpus = scan_corpus(write_shards([pii_table(rows[0::2]), pii_table(rows[1::2])]), cfg)
    assert corpus.population == {("code", "python"): 20, ("prose", "en"): 200, ("prose", "zh"): 60}
    assert {k: len(v) for k, v in corpus.cutoff.items()} == {
        ("code", "python"): 20,
        ("prose", "en"): 50,
        ("prose", "zh"): 50,
    }
    prose = corpus.reference["prose"]
    assert {r.key.split("-")[0] for r in prose} == {"en", "zh"}  # the crawl source is not reference material
    total = sum(len(r.text) for r in prose)
    assert 20_000 <= total < 20_000 + max(len(r.text) for r in prose)
    assert {r.lang for r in prose} == {"en", "zh"}
    assert {r.fold for r in prose} == {0, 1}  # input documents are split into cross-fitting folds
    assert len(corpus.reference["code"]) == 20


def test_samples_do_not_depend_on_sharding(
    english: list[str],
    chinese: list[str],
    python_files: list[str],
    pii_table: Callable[..., pa.Table],
    write_shards: Callable[[list[pa.Table]], list[str]],
) -> None:
    rows = _rows(english, chinese, python_files)
    cfg = QualityConfig(
        cutoff_sample_docs=30, prose_reference=ReferenceConfig(urls=["self"], domains=["general"], max_chars=30_000)
    )
    one = scan_corpus(write_shards([pii_table(rows)]), cfg)
    three = scan_corpus(write_shards([pii_table(rows[i::3]) for i in range(3)]), cfg)
    assert one == three
    other_seed = scan_corpus(write_shards([pii_table(rows)]), cfg.model_copy(update={"seed": 1}))
    assert other_seed.cutoff[("prose", "en")] != one.cutoff[("prose", "en")]
