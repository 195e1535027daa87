"""The quality stage end to end on real multilingual shards: what the fit trains and measures, that it is
byte-for-byte reproducible, and that scoring buckets per language and drops with reasons and exact counts."""

from __future__ import annotations

import json
import pickle
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from pretrain_core import schema, storage
from pretrain_core.quality.config import QualityConfig, ReferenceConfig
from pretrain_core.quality.sample_scores import SampleScores
from pretrain_core.quality.sampling import fold_of
from pretrain_core.quality.stage import (
    SCORED_SAMPLE,
    QualityStage,
    fit_quality,
    mean_perplexities,
    prebuild_reference_models,
)
from pretrain_core.stage import plan_shards, run_shard

pytestmark = pytest.mark.blas  # scores through BLAS: `make test-all` reruns it under other OpenBLAS kernels

CFG = QualityConfig(
    prose_reference=ReferenceConfig(urls=["self"], domains=["general", "specialist"], sources=["handbook"]),
    code_reference=ReferenceConfig(urls=["self"], domains=["code"]),
    vocab_size=1000,
    order=4,
    min_docs_per_language=50,
    min_reference_docs_per_language=50,
    tokenizer_max_chars=150_000,
)
Rows = list[tuple[str, str, str, str, str, str | None]]


@pytest.fixture(scope="module")
def corpus(
    english: list[str],
    chinese: list[str],
    french: list[str],
    python_files: list[str],
    navigation: dict[str, list[str]],
    as_documents: Callable[[list[str], int], list[str]],
    word_salad: Callable[[str, int], str],
) -> Rows:
    """Handbook prose (en, zh general; fr specialist, too little for its own model), crawled junk, code."""
    en, zh = as_documents(english, 3)[:180], as_documents(chinese, 3)[:150]
    rows: Rows = [(f"en-{i}", t, "general", "en", "handbook", None) for i, t in enumerate(en)]
    rows += [(f"zh-{i}", t, "general", "zh", "handbook", None) for i, t in enumerate(zh)]
    rows += [(f"fr-{i}", t, "specialist", "fr", "handbook", None) for i, t in enumerate(as_documents(french, 3)[:30])]
    rows += [(f"py-{i}", t, "code", "en", "stdlib", "python") for i, t in enumerate(python_files[:40])]
    rows += [(f"salad-{i}", word_salad(t, i), "general", "en", "crawl", None) for i, t in enumerate(en[:20])]
    labels = max(navigation["en"], key=len)
    rows += [(f"nav-{i}", "\n".join([labels] * (5 + i)), "general", "en", "crawl", None) for i in range(5)]
    return rows


@pytest.fixture(scope="module")
def fitted(tmp_path_factory: pytest.TempPathFactory, corpus: Rows) -> tuple[list[str], dict[str, str]]:
    folder = tmp_path_factory.mktemp("quality")
    shards = []
    for i in range(3):
        url = str(folder / "in" / f"part-{i:05d}.parquet")
        storage.write_parquet(url, _table(corpus[i::3]))
        shards.append(url)
    return shards, fit_quality(shards, CFG, str(folder / "artifacts"))


def _table(rows: Rows) -> pa.Table:
    n = len(rows)
    columns = {
        "id": [r[0] for r in rows],
        "text": [r[1] for r in rows],
        "source": [r[4] for r in rows],
        "domain": [r[2] for r in rows],
        "licence": ["MIT"] * n,
        "location": [f"test#{r[0]}" for r in rows],
        "code_language": [r[5] for r in rows],
        "lang": [r[3] for r in rows],
        "lang_score": [0.99] * n,
        "dup_cluster": [r[0] for r in rows],
        "dup_cluster_size": [1] * n,
        "pii_count": [0] * n,
        "pii_types": [[] for _ in range(n)],
    }
    return pa.table(columns, schema=schema.PII)


def test_fit_trains_per_language_models_and_cutoffs(fitted: tuple[list[str], dict[str, str]]) -> None:
    _, artifacts = fitted
    models = ["code", "prose", "prose.en", "prose.zh"]
    parts = [f"{m}.{kind}" for m in models for kind in ("tokenizer", "skeleton")]
    parts += [f"{m}.fold{f}.{kind}" for m in models for f in (0, 1) for kind in ("lm", "skeleton.lm")]
    assert set(artifacts) == {"cutoffs", "scored_sample", *parts}
    index = storage.read_json(artifacts["cutoffs"])
    assert {m: info["folds"] for m, info in index["models"].items()} == dict.fromkeys(models, 2)
    assert index["routes"] == {"prose": {"en": "prose.en", "zh": "prose.zh"}}  # fr has too few documents
    assert index["models"]["prose.zh"]["tokenizer"] == "characters"
    assert index["models"]["prose.en"]["tokenizer"] == "sentencepiece"
    assert index["models"]["prose.en"]["skeleton_words"] == CFG.skeleton_words
    assert index["models"]["prose"]["reference_docs"] == 180 + 150 + 30  # curated sources only, no crawl
    cutoffs = index["cutoffs"]
    assert set(cutoffs["prose.en"]) == {"en"} and set(cutoffs["prose.zh"]) == {"zh"}
    assert set(cutoffs["prose"]) == {"*"} and set(cutoffs["code"]) == {"*"}
    for by_key in cutoffs.values():
        for low, high in by_key.values():
            assert 1.0 < low < high
    assert cutoffs["prose.en"]["en"] != cutoffs["prose.zh"]["zh"]
    assert index["sample"]["prose"]["en"] == {"docs": 205, "population": 205}


def test_cross_fitting_scores_each_document_with_the_model_that_never_saw_it(
    fitted: tuple[list[str], dict[str, str]], corpus: Rows
) -> None:
    shards, artifacts = fitted
    stage = QualityStage(CFG, artifacts)
    scored = pa.concat_tables([stage.process(storage.read_parquet(url)).kept for url in shards]).to_pylist()
    english = [r for r in scored if r["source"] == "handbook" and r["lang"] == "en"]  # all of them are reference
    model = stage.model("prose.en")
    by_part = [part.perplexities([r["text"] for r in english]) for part in model.parts]
    folds = [fold_of(CFG.seed, r["id"]) for r in english]
    stored = [r["perplexity"] for r in english]
    assert stored == [float(by_part[f][i]) for i, f in enumerate(folds)]
    memorised = [float(by_part[1 - f][i]) for i, f in enumerate(folds)]
    assert sorted(memorised)[len(memorised) // 2] < 0.5 * sorted(stored)[len(stored) // 2]


def test_shards_take_the_fits_sample_scores_with_the_same_bits(
    fitted: tuple[list[str], dict[str, str]], corpus: Rows
) -> None:
    """The corpus is small enough for the cut-off sample to hold every document: the shards score none again,
    and give what scoring them would (a fit made before the sample's scores were kept)."""
    shards, artifacts = fitted
    kept_scores = QualityStage(CFG, artifacts)
    rescoring = QualityStage(CFG, {name: url for name, url in artifacts.items() if name != SCORED_SAMPLE})
    for url in shards:
        table = storage.read_parquet(url)
        assert kept_scores.process(table).kept.equals(rescoring.process(table).kept)
    sample = SampleScores.from_table(storage.read_parquet(artifacts[SCORED_SAMPLE]))
    english = [(r[0], r[1]) for r in corpus if r[3] == "en" and r[2] == "general"]
    ids, texts = [doc_id for doc_id, _ in english], [text for _, text in english]
    assert sample.take("prose.en", ids, texts)[0].all()
    assert not sample.take("prose.en", ids, [text + " edited" for text in texts])[0].any()  # only with its text
    assert not sample.take("prose.zh", ids, texts)[0].any()  # only under the model that scored it
    # The shards read the kept scores rather than scoring again: shifted scores shift every perplexity.
    kept_table = storage.read_parquet(artifacts[SCORED_SAMPLE])
    shifted_url = str(Path(artifacts[SCORED_SAMPLE]).with_name("shifted_sample.parquet"))
    lexical = kept_table.schema.get_field_index("lexical")
    storage.write_parquet(
        shifted_url, kept_table.set_column(lexical, "lexical", pc.add(kept_table.column("lexical"), 1.0))
    )
    shifted = QualityStage(CFG, artifacts | {SCORED_SAMPLE: shifted_url})
    table = storage.read_parquet(shards[0])
    assert (
        shifted.process(table).kept.column("perplexity").to_pylist()
        != kept_scores.process(table).kept.column("perplexity").to_pylist()
    )
    # The kept-word shares travel with the scores (a signal column of their own).
    share = kept_table.schema.get_field_index("kept_share")
    halved_url = str(Path(artifacts[SCORED_SAMPLE]).with_name("halved_sample.parquet"))
    storage.write_parquet(
        halved_url, kept_table.set_column(share, "kept_share", pc.multiply(kept_table.column("kept_share"), 0.5))
    )
    halved = QualityStage(CFG, artifacts | {SCORED_SAMPLE: halved_url}).process(table).kept
    signals = kept_scores.process(table).kept.column("quality_signals")
    assert halved.column("quality_signals") != signals
    # A sample written before the shares were kept is not used: its documents are scored again.
    old_url = str(Path(artifacts[SCORED_SAMPLE]).with_name("old_sample.parquet"))
    storage.write_parquet(old_url, kept_table.drop_columns(["kept_share"]))
    assert not SampleScores.from_table(storage.read_parquet(old_url)).by_model
    old = QualityStage(CFG, artifacts | {SCORED_SAMPLE: old_url})
    assert old.process(table).kept.equals(kept_scores.process(table).kept)


def test_fit_is_byte_for_byte_deterministic(fitted: tuple[list[str], dict[str, str]], tmp_path: Path) -> None:
    shards, artifacts = fitted
    again = fit_quality(list(reversed(shards)), CFG, str(tmp_path / "again"))
    assert set(again) == set(artifacts)
    for name, url in artifacts.items():
        assert storage.read_bytes(again[name]) == storage.read_bytes(url), name


def test_a_fit_on_the_same_reference_copies_the_cached_models(
    fitted: tuple[list[str], dict[str, str]], tmp_path: Path
) -> None:
    """Models are cached by reference and settings: a fit through the cache writes the same bytes; a second one
    copies the entries (a fact planted in one shows up in its cut-offs file), a half-written entry is fitted
    again, and other settings make entries of their own."""
    shards, artifacts = fitted
    cache = tmp_path / "cache"
    first = fit_quality(shards, CFG, str(tmp_path / "first"), str(cache))
    assert {name: storage.read_bytes(url) for name, url in first.items()} == {
        name: storage.read_bytes(url) for name, url in artifacts.items()
    }
    entries = sorted(cache.iterdir())
    assert len(entries) == sum(name.endswith(".tokenizer") for name in artifacts)
    planted, half_written = entries[0] / "info.json", entries[1] / "info.json"
    entry = json.loads(planted.read_text())
    entry["info"]["reference_docs"] = 123_456_789
    planted.write_text(json.dumps(entry))
    half_written.unlink()
    second = fit_quality(shards, CFG, str(tmp_path / "second"), str(cache))
    assert "123456789" in storage.read_bytes(second["cutoffs"]).decode()
    assert half_written.exists()
    fit_quality(shards, CFG.model_copy(update={"order": 3}), str(tmp_path / "third"), str(cache))
    assert len(list(cache.iterdir())) == 2 * len(entries)


def test_models_prebuilt_for_a_file_reference_are_copied_not_trained(corpus: Rows, tmp_path: Path) -> None:
    """`prebuild_reference_models` trains every model a file reference can give (each language with enough
    records, whatever the input holds); a fit then copies them (nothing trained into its cache) and writes the
    bytes a fit that trained them writes."""
    reference = tmp_path / "reference.jsonl"
    handbook = [r for r in corpus if r[4] == "handbook"]
    reference.write_text("".join(json.dumps({"text": r[1], "lang": r[3]}) + "\n" for r in handbook))
    cfg = CFG.model_copy(
        update={"prose_reference": ReferenceConfig(urls=[str(reference)], domains=["general", "specialist"])}
    )
    shard = str(tmp_path / "in" / "part-00000.parquet")
    storage.write_parquet(shard, _table([r for r in corpus if r[0].startswith("en-")]))
    prebuilt = str(tmp_path / "prebuilt")
    keys = prebuild_reference_models(cfg, prebuilt)
    assert len(keys) == 3  # the prose model and the en and zh models (fr has too few records); no code reference

    trained = fit_quality([shard], cfg, str(tmp_path / "trained"), str(tmp_path / "trained-cache"))
    copied = fit_quality([shard], cfg, str(tmp_path / "copied"), str(tmp_path / "copied-cache"), prebuilt)

    assert not (tmp_path / "copied-cache").exists()
    assert {path.name for path in (tmp_path / "trained-cache").iterdir()} <= set(keys)
    assert {n: storage.read_bytes(u) for n, u in copied.items()} == {
        n: storage.read_bytes(u) for n, u in trained.items()
    }


def test_scores_buckets_and_drops_with_reasons(fitted: tuple[list[str], dict[str, str]], corpus: Rows) -> None:
    shards, artifacts = fitted
    stage = QualityStage(CFG, artifacts)
    outputs = [stage.process(storage.read_parquet(url)) for url in shards]
    kept = pa.concat_tables([o.kept for o in outputs])
    dropped = pa.concat_tables([o.dropped for o in outputs])
    assert kept.num_rows + dropped.num_rows == len(corpus)
    schema.validate(kept, schema.QUALITY, "kept")
    schema.validate(dropped, schema.dropped_schema(schema.QUALITY), "dropped")

    rows = {r["id"]: r for r in pa.concat_tables([kept, dropped.drop_columns(["drop_reason"])]).to_pylist()}
    assert set(dropped.column("drop_reason").to_pylist()) == {"quality_bucket_tail"}
    assert set(dropped.column("domain").to_pylist()) == {"general"}  # specialist and code keep every bucket
    assert all(rows[f"salad-{i}"]["quality_bucket"] == "tail" for i in range(20))
    assert all(rows[f"nav-{i}"]["quality_bucket"] == "tail" for i in range(5))
    tail, head = CFG.score_cutoffs
    for r in rows.values():
        score = r["quality_score"]
        assert r["quality_bucket"] == ("head" if score >= head else "middle" if score >= tail else "tail"), r["id"]
        assert 0.0 <= r["quality_classifier"] <= 1.0
    handbook = [r["quality_score"] for r in rows.values() if r["source"] == "handbook"]
    assert np.median(handbook) > head  # edited text scores high in absolute terms, not just relative to the input

    stats: Counter[str] = Counter()
    for output in outputs:
        stats.update(output.stats)
    assert stats["bucket_head"] + stats["bucket_middle"] + stats["bucket_tail"] == len(corpus)
    assert stats["bucket_tail"] >= dropped.num_rows
    assert stats["docs_prose_en"] == 205
    assert stats["docs_code_python"] == sum(1 for r in corpus if r[2] == "code") >= 20
    means = mean_perplexities(dict(stats))
    assert set(means) == {"prose_en", "prose_zh", "prose_fr", "code_python"}
    en_ppl = [r["perplexity"] for r in rows.values() if r["lang"] == "en" and r["domain"] == "general"]
    assert means["prose_en"] == pytest.approx(sum(en_ppl) / len(en_ppl), rel=1e-4)


def test_stage_pickles_without_models_and_runs_as_a_shard(
    fitted: tuple[list[str], dict[str, str]], tmp_path: Path
) -> None:
    shards, artifacts = fitted
    stage = QualityStage(CFG, artifacts)
    first = stage.process(storage.read_parquet(shards[0]))
    shipped = pickle.dumps(stage)
    assert len(shipped) < 20_000  # config and URLs, not megabytes of n-grams
    again = pickle.loads(shipped).process(storage.read_parquet(shards[0]))
    assert again.kept.equals(first.kept) and again.dropped.equals(first.dropped)

    empty = stage.process(storage.read_parquet(shards[0]).slice(0, 0))
    assert empty.kept.num_rows == empty.dropped.num_rows == 0
    schema.validate(empty.kept, schema.QUALITY, "empty")

    job = plan_shards("quality", shards[:1], str(tmp_path / "out"), "hash")[0]
    record = run_shard(job, pickle.loads(shipped))
    assert record.docs_in == record.docs_out + sum(record.dropped.values())
    assert record.dropped == {"quality_bucket_tail": first.dropped.num_rows}
    written = storage.read_parquet(job.data_url)
    assert written.column("id").equals(first.kept.column("id"))
    assert written.column("perplexity").equals(first.kept.column("perplexity"))


def test_fit_refuses_a_domain_group_without_reference(fitted: tuple[list[str], dict[str, str]], tmp_path: Path) -> None:
    shards, _ = fitted
    cfg = CFG.model_copy(
        update={"code_reference": ReferenceConfig(urls=["self"], domains=["code"], sources=["vendored"])}
    )
    with pytest.raises(ValueError, match="no code reference"):
        fit_quality(shards, cfg, str(tmp_path / "artifacts"))


def test_without_the_classifier_the_score_ranks_as_perplexity_does(fitted: tuple[list[str], dict[str, str]]) -> None:
    shards, artifacts = fitted
    stage = QualityStage(CFG.model_copy(update={"classifier": False}), artifacts)
    table = pa.concat_tables([stage.process(storage.read_parquet(url)).kept for url in shards])
    english = [r for r in table.to_pylist() if r["lang"] == "en" and r["domain"] != "code"]
    by_perplexity = sorted(english, key=lambda r: r["perplexity"])
    scores = [r["quality_score"] for r in by_perplexity]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) > 10
    assert {r["quality_classifier"] for r in english} == {0.5}


def test_signals_are_columns_of_the_documents_group(fitted: tuple[list[str], dict[str, str]]) -> None:
    shards, artifacts = fitted
    stage = QualityStage(CFG, artifacts)
    rows = pa.concat_tables([stage.process(storage.read_parquet(url)).kept for url in shards]).to_pylist()
    prose = next(r for r in rows if r["domain"] != "code")["quality_signals"]
    code = next(r for r in rows if r["domain"] == "code")["quality_signals"]
    assert prose["log_words"] > 3 and prose["log_max_line_length"] is None
    assert code["log_max_line_length"] > 2 and code["log_words"] is None
    assert prose["digit_char_share"] is not None and code["digit_char_share"] is not None  # a field both groups use
