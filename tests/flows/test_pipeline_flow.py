"""The whole DAG as a real Prefect flow run on a real slice of the demo corpus, then reruns."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

from flows.corpus_rebuild import corpus_rebuild
from flows.pipeline import pretrain_pipeline
from pretrain_core import storage
from pretrain_core.config import load_config
from pretrain_core.manifest import read_manifest
from pretrain_core.pipeline import CORPUS_STAGES, training_config
from pretrain_core.tokenize.splits import load_boundaries
from pretrain_core.train.checkpoint.catalog import EVALUATIONS


def _snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every output file's bytes and modification time: corpus, checkpoints, evaluations, logs."""
    return {
        str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.mark.slow  # the whole DAG, a rerun and a partial rerun: end to end
@pytest.mark.usefixtures("prefect_harness")
def test_whole_dag_then_idempotent_rerun_then_one_shard_redone(small_config_file: Path) -> None:
    report = pretrain_pipeline(str(small_config_file))
    root = small_config_file.parent / "run"

    assert list(report.stages) == list(CORPUS_STAGES)
    for name in CORPUS_STAGES:
        manifest = storage.read_json(str(root / "corpus" / name / "manifest.json"))
        assert manifest["docs_in"] > 0 and manifest["docs_out"] > 0, name
        assert len(manifest["config_hash"]) == 16 and manifest["code_version"]
    assert report.stages["ingest"]["dropped"].get("vendored", 0) >= 1  # the code tree's vendored files
    tokens = storage.read_json(str(root / "corpus" / "tokenize" / "manifest.json"))
    assert len(tokens["facts"]["tokenizer_sha256"]) == 64
    assert tokens["stats"]["tokens_code_train"] > 0 and tokens["stats"]["tokens_general_validation"] > 0
    splits_url = read_manifest(str(root / "corpus" / "tokenize" / "manifest.json")).artifacts["splits"]
    assert tokens["artifacts"]["splits"] == "../splits/splits.json"  # written relative: the root can move
    _assert_heldout_documents_pass_the_mixture_once(root, splits_url)
    assert report.train["steps"] == 12
    assert report.train["final_validation_perplexity"] < report.train["initial_validation_perplexity"]
    assert [ev["step"] for ev in report.evaluations] == [6, 12]
    train_root = Path(training_config(load_config(small_config_file)).output_url)
    assert all((train_root / "checkpoints" / f"step-{s:08d}" / "eval.json").exists() for s in (6, 12))
    records = [storage.read_json(str(train_root / EVALUATIONS / f"step-{s:08d}.json")) for s in (6, 12)]
    assert [r["step"] for r in records] == [6, 12]  # the durable records, evaluated as each checkpoint landed
    _assert_stage_artifacts_in_the_ui(root)

    before = _snapshot(root)
    assert pretrain_pipeline(str(small_config_file)).evaluations == report.evaluations
    assert _snapshot(root) == before, "an unchanged rerun must do no work and change no byte"

    victim = sorted((root / "corpus" / "clean" / "data").glob("*.parquet"))[0]
    victim.unlink()
    corpus_rebuild(str(small_config_file))
    after = _snapshot(root)
    rewritten = {k for k in after if after[k][1] != before[k][1]}
    # Records and manifests carry timings; every data file and fitted artifact must be byte-identical.
    assert {k: v[0] for k, v in after.items() if not k.endswith(".json")} == {
        k: v[0] for k, v in before.items() if not k.endswith(".json")
    }
    assert rewritten <= {
        f"corpus/clean/data/{victim.name}",
        f"corpus/clean/dropped/{victim.name}",
        f"corpus/clean/_shards/{victim.name.replace('.parquet', '.json')}",
        "corpus/clean/manifest.json",
    }
    assert f"corpus/clean/data/{victim.name}" in rewritten


def _assert_heldout_documents_pass_the_mixture_once(root: Path, splits_url: str) -> None:
    """Mixture and tokenize share one assignment, made before the mixture; held-out documents are never copied."""
    mixture = read_manifest(str(root / "corpus" / "mixture" / "manifest.json")).model_dump()
    assert splits_url == mixture["artifacts"]["splits"] == str(root / "corpus" / "splits" / "splits.json")
    copies: Counter[str] = Counter()
    domain_of: dict[str, str] = {}
    for url in (u for u in mixture["outputs"] if "/data/" in u):
        table = storage.read_parquet(url, columns=["id", "domain"])
        for doc_id, domain in zip(table["id"].to_pylist(), table["domain"].to_pylist(), strict=True):
            copies[doc_id] += 1
            domain_of[doc_id] = domain
    ids = sorted(copies)
    split_of = dict(zip(ids, load_boundaries(splits_url).split_of(ids, [domain_of[i] for i in ids]), strict=True))
    heldout = {i: n for i, n in copies.items() if split_of[i] != "train"}
    assert heldout and set(heldout.values()) == {1}
    assert max(copies.values()) > 1  # training documents were up-sampled


def _assert_stage_artifacts_in_the_ui(root: Path) -> None:
    """Each stage left a finished progress bar and a counts table that names where its outputs are."""
    keys = [f"small-{name}-{kind}" for name in CORPUS_STAGES for kind in ("progress", "counts")]
    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=keys)))
    latest = {a.key: a for a in sorted(artifacts, key=lambda a: a.created or 0)}
    assert set(latest) == set(keys)
    for name in CORPUS_STAGES:
        assert latest[f"small-{name}-progress"].data == 100.0
        counts = latest[f"small-{name}-counts"]
        assert counts.type == "table" and str(root / "corpus" / name / "manifest.json") in (counts.description or "")
    pii = latest["small-pii-counts"].description or ""
    with get_client(sync_client=True) as client:
        cards = client.read_artifacts(artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["small-data-card"])))
    card = max(cards, key=lambda artifact: artifact.created or 0)
    assert card.type == "markdown" and "## Sources and licences" in str(card.data)
    assert (root / "card" / "card.html").exists() and (root / "card" / "card.json").exists()
    assert "stats: " in pii and "pii_tagger_not_run=" in pii  # what the name tagger could not read is in the UI
