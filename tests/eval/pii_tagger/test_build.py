"""The shipped PII tagger is what `python -m pretrain_eval.pii_tagger` builds, and its report holds its bars."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pretrain_core.pii.classifier import SHIPPED_MODEL, NameAddressTagger, load_tagger
from pretrain_eval.pii_tagger.__main__ import main
from pretrain_eval.pii_tagger.build import REPORT_FILE, BuiltTagger, TaggerBuild, build_tagger, differences, shipped_dir


@pytest.fixture(scope="module")
def built() -> BuiltTagger:
    return build_tagger(TaggerBuild())


def test_the_shipped_model_is_what_the_builder_makes(built: BuiltTagger) -> None:
    assert differences(built.tagger, load_tagger(None)) == []
    shipped_report = json.loads((shipped_dir() / REPORT_FILE).read_text(encoding="utf-8"))
    assert built.report == shipped_report


def test_a_changed_model_is_reported(built: BuiltTagger) -> None:
    t = built.tagger
    nudged = NameAddressTagger(t.featurizer, t.keys, t.weights + 1e-3, t.bias)
    assert differences(nudged, t) == ["weights differ by up to 1.00e-03 (tolerance 1e-05)"]
    assert differences(NameAddressTagger(t.featurizer, t.keys[1:], t.weights[1:], t.bias), t) == ["feature keys differ"]


def test_the_held_out_report_meets_its_bars(built: BuiltTagger) -> None:
    report = built.report
    assert report["test"]["person"]["precision"] >= 0.9 and report["test"]["person"]["recall"] >= 0.8
    assert report["test"]["address"]["precision"] >= 0.9
    assert {"person/zh", "person/ja", "address/de"} <= set(report["test_unlisted"])


def test_the_build_is_deterministic(built: BuiltTagger, tmp_path: Path) -> None:
    assert main(["--output", str(tmp_path)]) == 0
    assert (tmp_path / SHIPPED_MODEL).read_bytes() == built.tagger.to_bytes()
    assert main(["--check"]) == 0
