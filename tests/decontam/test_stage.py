"""The decontaminate stage run as `pretrain stage decontaminate` runs it: evaluation items planted in real documents
are all found and nothing else is; redaction cuts exactly the overlap; text of the corpus's own held-out split
pasted into a training document is found too; per-set counts reach the manifest."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pretrain_core import storage
from pretrain_core.config import PipelineConfig, load_config
from pretrain_core.decontam.config import DecontamConfig
from pretrain_core.decontam.index import IndexWriter, NgramIndex
from pretrain_core.decontam.ngrams import ngram_hashes, normalised
from pretrain_core.decontam.scan import find_overlaps
from pretrain_core.dedup.config import DedupConfig
from pretrain_core.standalone import run_standalone
from pretrain_core.tokenize.splits import fit_splits, load_boundaries
from tests.decontam.planted import Planted, demo_documents, plant, tutor_items
from tests.quality_tables import quality_table


def _shard(texts: list[str], path: Path) -> str:
    docs = [
        {"id": f"doc-{i:05d}", "text": t, "domain": "general", "location": f"demo:{i}"} for i, t in enumerate(texts)
    ]
    pq.write_table(quality_table(docs), path)
    return str(path)


def _eval_file(items: list[str], path: Path) -> str:
    """The items as lm-eval-like records: the passage split into a question and its choices."""
    with path.open("w", encoding="utf-8") as out:
        for item in items:
            head, _, tail = item.partition(" ")
            out.write(json.dumps({"question": head, "choices": [tail], "label": 0}, ensure_ascii=False) + "\n")
    return str(path)


def _config(tmp_path: Path, items: list[str], *overrides: str) -> PipelineConfig:
    eval_file = _eval_file(items, tmp_path / "vim.jsonl")
    sets = f'[{{name: vim, path: "{eval_file}", text_fields: [question, choices]}}]'
    return load_config(overrides=[f"decontaminate.eval_sets={sets}", *overrides])


def _training_rows(texts: list[str], folder: Path) -> list[int]:
    """The documents the split puts in train: it depends on ids and domains only, so it holds after pasting."""
    boundaries = load_boundaries(fit_splits([_shard(texts, folder / "clean.parquet")], load_config().pack,
                                            str(folder / "splits"))["splits"])  # fmt: skip
    splits = boundaries.split_of([f"doc-{i:05d}" for i in range(len(texts))], ["general"] * len(texts))
    return [i for i, split in enumerate(splits) if split == "train"]


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Planted:
    """Items planted in training documents only: held-out ones are evaluation text themselves, never checked."""
    documents = demo_documents()
    rows = _training_rows(documents, tmp_path_factory.mktemp("splits"))
    return plant(documents, tutor_items(), count=60, seed=7, rows=rows)


def _dropped(output: Path) -> pa.Table:
    return pa.concat_tables(pq.read_table(p) for p in sorted((output / "dropped").glob("*.parquet")))


def test_every_planted_item_is_found_and_no_clean_document(planted: Planted, tmp_path: Path) -> None:
    cfg = _config(tmp_path, tutor_items(), "decontaminate.heldout=false")
    shard = _shard(planted.texts, tmp_path / "demo.parquet")
    manifest = run_standalone(cfg, "decontaminate", [shard], str(tmp_path / "out"))["decontaminate"]
    dropped = _dropped(tmp_path / "out")
    assert sorted(dropped.column("id").to_pylist()) == sorted(f"doc-{row:05d}" for row in planted.contaminated)
    assert set(dropped.column("drop_reason").to_pylist()) == {"contaminated:vim"}
    assert manifest.dropped == {"contaminated:vim": 60}
    assert manifest.stats["contaminated_docs/vim"] == 60
    assert manifest.docs_out == len(planted.texts) - 60


def test_redaction_cuts_the_overlap_and_keeps_the_rest(planted: Planted, tmp_path: Path) -> None:
    overrides = ["decontaminate.heldout=false", "decontaminate.action=redact", "decontaminate.redact_margin_chars=0"]
    cfg = _config(tmp_path, tutor_items(), *overrides, "decontaminate.min_remaining_chars=20")
    shard = _shard(planted.texts, tmp_path / "demo.parquet")
    manifest = run_standalone(cfg, "decontaminate", [shard], str(tmp_path / "out"))["decontaminate"]
    kept = pq.read_table(tmp_path / "out" / "data" / "demo.parquet")
    texts = dict(zip(kept.column("id").to_pylist(), kept.column("text").to_pylist(), strict=True))
    originals = demo_documents()
    redacted = {row for row in planted.contaminated if f"doc-{row:05d}" in texts}
    assert manifest.stats["redacted_docs/vim"] == len(redacted) >= 55  # the rest had too little left
    for row in redacted:
        left = texts[f"doc-{row:05d}"]
        assert planted.inserted[row] not in left and len(left) >= len(originals[row]) * 0.5
    clean = [i for i in range(len(originals)) if i not in planted.contaminated][:500]
    assert all(texts[f"doc-{i:05d}"] == originals[i] for i in clean)
    index = NgramIndex.open(str(tmp_path / "out" / "artifacts" / "index"))
    assert not find_overlaps(pa.array([texts[f"doc-{row:05d}"] for row in redacted]), index, cfg.decontaminate,
                             cfg.dedup)  # fmt: skip


def test_heldout_text_pasted_into_a_training_document_is_found(tmp_path: Path) -> None:
    """The split depends on ids and domains only, so the held-out documents are known before any text is pasted."""
    texts = demo_documents()[:400]
    cfg = load_config()
    training = _training_rows(texts, tmp_path)
    heldout = next(i for i in range(len(texts)) if i not in training and len(texts[i].split()) > 60)
    train = training[:3]
    window = " ".join(texts[heldout].split()[10:50])
    pasted = [f"{t}\n{window}\n" if i in train else t for i, t in enumerate(texts)]
    output = tmp_path / "out"
    manifest = run_standalone(cfg, "decontaminate", [_shard(pasted, tmp_path / "demo.parquet")], str(output))
    dropped = _dropped(output)
    assert {f"doc-{i:05d}" for i in train} <= set(dropped.column("id").to_pylist())
    assert f"doc-{heldout:05d}" not in dropped.column("id").to_pylist()  # held-out documents are never checked
    assert manifest["decontaminate"].stats["contaminated_docs/heldout"] >= 3
    assert "heldout_boilerplate_matches" in manifest["decontaminate"].stats  # what the boilerplate rule set aside


def test_eval_items_shorter_than_an_ngram_are_counted(tmp_path: Path) -> None:
    cfg = _config(tmp_path, ["a short item", " ".join(f"w{i}" for i in range(40))], "decontaminate.heldout=false")
    shard = _shard(demo_documents()[:50], tmp_path / "demo.parquet")
    run_standalone(cfg, "decontaminate", [shard], str(tmp_path / "out"))
    info = storage.read_json(str(tmp_path / "out" / "artifacts" / "index" / "index.json"))
    assert info["items"] == {"vim": {"items": 2, "short_items": 1}}
    assert info["ngrams_per_set"] == {"vim": 40 - 13 + 1}


def test_a_disabled_stage_passes_everything(tmp_path: Path) -> None:
    cfg = load_config(overrides=["decontaminate.enabled=false"])
    shard = _shard(demo_documents()[:50], tmp_path / "demo.parquet")
    manifest = run_standalone(cfg, "decontaminate", [shard], str(tmp_path / "out"))["decontaminate"]
    assert manifest.docs_out == 50 and manifest.dropped == {}


def test_every_item_finds_itself(tmp_path: Path) -> None:
    """The kernel's hashes of items, written and looked up, find each item in itself."""
    items = tutor_items()[:20]
    writer = IndexWriter(["x"])
    writer.add("x", ngram_hashes(normalised(pa.array(items), DedupConfig().ignore), 13, 1.5).hashes)
    writer.finish(str(tmp_path), 1e-3, 2**20, {})
    found = find_overlaps(pa.array(items), NgramIndex.open(str(tmp_path)), DecontamConfig(), DedupConfig())
    assert set(found) == set(range(len(items)))


def test_heldout_boilerplate_is_set_aside_and_counted(tmp_path: Path) -> None:
    """A footer held-out text shares with more than `heldout_boilerplate_docs` training documents is no leak: its
    matches are set aside and counted, one by one; a held-out passage pasted into one document is still found."""
    items = tutor_items()
    footer, passage, clean = items[0], items[1], items[2:8]
    writer = IndexWriter(["heldout"])
    writer.add("heldout", ngram_hashes(normalised(pa.array([f"{footer}\n\n{passage}"]), DedupConfig().ignore), 13,
                                       1.5).hashes)  # fmt: skip
    writer.finish(str(tmp_path), 1e-3, 2**20, {})
    cfg = DecontamConfig(heldout_boilerplate_docs=3)
    texts = [f"{text}\n\n{footer}" for text in clean[:4]] + [f"{clean[4]}\n\n{passage}", clean[5]]
    footer_ngrams = ngram_hashes(normalised(pa.array([footer]), DedupConfig().ignore), 13, 1.5).hashes.size
    stats: Counter[str] = Counter()
    found = find_overlaps(pa.array(texts), NgramIndex.open(str(tmp_path)), cfg, DedupConfig(), stats)
    assert set(found) == {4}  # the pasted passage only: the footer in four documents is boilerplate
    assert stats["heldout_boilerplate_matches"] == 4 * footer_ngrams
