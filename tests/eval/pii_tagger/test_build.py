"""The shipped PII tagger is what `python -m pretrain_eval.pii_tagger` builds (the same decisions, weights within
what another CPU's BLAS kernel moves them), and its report holds its bars. `.ci/run` runs this file under other
OpenBLAS kernels too."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from pretrain_core.pii.classifier import CLASSES, SHIPPED_MODEL, NameAddressTagger, load_tagger
from pretrain_eval.pii_tagger.__main__ import main
from pretrain_eval.pii_tagger.build import (
    REPORT_FILE,
    WEIGHT_TOLERANCE,
    BuiltTagger,
    TaggerBuild,
    build_tagger,
    differences,
    shipped_dir,
)

pytestmark = pytest.mark.blas  # fits or scores through BLAS: `make test-all` reruns it under other OpenBLAS kernels


@pytest.fixture(scope="module")
def built() -> BuiltTagger:
    return build_tagger(TaggerBuild())


@pytest.fixture(scope="module")
def shipped_report() -> dict[str, Any]:
    return json.loads((shipped_dir() / REPORT_FILE).read_text(encoding="utf-8"))


def test_the_shipped_model_is_what_the_builder_makes(built: BuiltTagger, shipped_report: dict[str, Any]) -> None:
    assert differences(built, load_tagger(None), shipped_report) == []


def test_a_changed_model_is_reported(built: BuiltTagger, shipped_report: dict[str, Any]) -> None:
    t = built.tagger
    within = NameAddressTagger(t.featurizer, t.keys, t.weights + WEIGHT_TOLERANCE / 2, t.bias)
    assert differences(built, within, built.report) == []
    beyond = NameAddressTagger(t.featurizer, t.keys, t.weights + 2 * WEIGHT_TOLERANCE, t.bias)
    assert differences(built, beyond, built.report) == ["weights differ by up to 1.00e-02 (tolerance 5e-03)"]
    truncated = NameAddressTagger(t.featurizer, t.keys[1:], t.weights[1:], t.bias)
    assert differences(built, truncated, built.report) == ["feature keys differ"]


def test_changed_decisions_are_reported(built: BuiltTagger) -> None:
    t = built.tagger
    no_person = t.weights.copy()
    no_person[:, [CLASSES.index("B-person"), CLASSES.index("I-person")]] -= 50.0
    blinded = NameAddressTagger(t.featurizer, t.keys, no_person, t.bias)
    problems = differences(built, blinded, built.report)
    assert any(p.startswith("spans differ on ") for p in problems), problems


def test_a_report_whose_figures_moved_is_reported(built: BuiltTagger) -> None:
    moved = copy.deepcopy(built.report)
    moved["test"]["person"]["recall"] -= 0.01
    assert differences(built, built.tagger, moved) == ["report's test person recall moved by 0.0100"]


def test_the_held_out_report_meets_its_bars(built: BuiltTagger) -> None:
    report = built.report
    assert report["test"]["person"]["precision"] >= 0.9 and report["test"]["person"]["recall"] >= 0.8
    assert report["test"]["address"]["precision"] >= 0.9
    assert {"person/zh", "person/ja", "address/de"} <= set(report["test_unlisted"])


def test_the_build_is_deterministic(built: BuiltTagger, tmp_path: Path) -> None:
    assert main(["--output", str(tmp_path)]) == 0
    assert (tmp_path / SHIPPED_MODEL).read_bytes() == built.tagger.to_bytes()
    assert main(["--check"]) == 0
