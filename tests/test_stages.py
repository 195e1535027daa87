"""The stage table: the default corpus stages chain their contracts, and a stage added by one module and one
registry line runs through the real pipeline (and standalone) like the built-in ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pretrain_core import schema, storage
from pretrain_core.config import load_config
from pretrain_core.pipeline import CorpusPipeline
from pretrain_core.stages import CORPUS, SharedFit, StageRegistry, StageSpec
from pretrain_core.standalone import run_standalone
from tests.toy_stage import REASON

TOY = StageSpec("word_filter", "tests.toy_stage", schema.PII, schema.PII, "drop documents that mention a word")
WITH_TOY = CORPUS.insert_after("pii", TOY)


def test_the_default_table_chains_contracts_and_fits() -> None:
    assert CORPUS.names == ("ingest", "clean", "dedup", "pii", "quality", "decontaminate", "mixture", "tokenize")
    assert list(CORPUS.hash_order()) == [
        *CORPUS.names[:5],
        "splits",
        "decontaminate",
        "tokenizer",
        "mixture",
        "tokenize",
    ]
    assert [CORPUS.previous(n) for n in CORPUS.names] == [None, *CORPUS.names[:-1]]
    assert CORPUS.previous("tokenizer") == "decontaminate" and CORPUS.previous("splits") == "quality"


def test_a_stage_that_reads_another_contract_is_refused() -> None:
    with pytest.raises(ValueError, match="reads another contract"):
        CORPUS.insert_after("clean", TOY)  # dedup's output is not PII's
    with pytest.raises(ValueError, match="unique"):
        WITH_TOY.insert_after("quality", TOY)
    with pytest.raises(ValueError, match="reads unknown stage 'nowhere'"):
        StageRegistry(stages=CORPUS.stages, shared_fits=(SharedFit("t", "m", reads="nowhere"),))
    with pytest.raises(ValueError, match="unknown shared fits"):
        StageRegistry(stages=(*CORPUS.stages, StageSpec("x", "m", schema.TOKENS, schema.TOKENS, "", uses=("y",))),
                      shared_fits=CORPUS.shared_fits)  # fmt: skip


def test_an_added_stage_runs_between_its_neighbours_in_the_real_pipeline(small_config_file: Path) -> None:
    cfg = load_config(small_config_file)
    pipeline = CorpusPipeline(cfg, registry=WITH_TOY)
    manifests = {name: pipeline.run_stage(name) for name in WITH_TOY.names[:6]}
    toy, quality = manifests["word_filter"], manifests["quality"]
    assert toy.docs_in == manifests["pii"].docs_out
    assert toy.dropped == {REASON: toy.docs_in - toy.docs_out} and toy.docs_out < toy.docs_in  # some mention it
    assert quality.docs_in == toy.docs_out  # quality read the new stage's shards
    kept = [t for u in storage.list_files(storage.join(pipeline.root("quality"), "data"), ".parquet")
            for t in storage.read_parquet(u).column("text").to_pylist()]  # fmt: skip
    assert kept and not any("lambda" in t.lower() for t in kept)
    # the new stage's settings chain into every later hash, and the default pipeline's hashes stay as they were
    assert pipeline.config_hash("quality") != CorpusPipeline(cfg).config_hash("quality")
    assert pipeline.config_hash("pii") == CorpusPipeline(cfg).config_hash("pii")


def test_an_added_stage_runs_standalone_on_plain_jsonl(tmp_path: Path) -> None:
    docs = [{"id": "a", "text": "Python has lambda expressions."}, {"id": "b", "text": "Plain prose here."}]
    source = tmp_path / "docs.jsonl"
    source.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    ran = run_standalone(load_config(), "word_filter", [str(source)], str(tmp_path / "out"), registry=WITH_TOY)
    assert list(ran) == ["ingest", "word_filter"] and ran["ingest"].docs_out == 2
    manifest = ran["word_filter"]
    assert (manifest.docs_in, manifest.docs_out, manifest.dropped) == (2, 1, {REASON: 1})
