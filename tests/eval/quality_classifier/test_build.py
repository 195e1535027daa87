"""The shipped quality classifier is what its build makes, loads without running code, and separates its own
training kinds; what it does on text it never saw is the labelled set's business (tests/eval/stage_quality)."""

from __future__ import annotations

import numpy as np
import pytest

from pretrain_core.quality.classifier import SignalClassifier, from_bytes, shipped_classifier_bytes, to_bytes
from pretrain_eval.quality_classifier.build import TrainingSet, differences, fit_classifiers, report, training_set
from pretrain_eval.quality_classifier.training_data import CODE_GENERATORS, PROSE_GENERATORS

pytestmark = pytest.mark.blas  # fits or scores through BLAS: `make test-all` reruns it under other OpenBLAS kernels


@pytest.fixture(scope="module")
def data() -> TrainingSet:
    return training_set()


@pytest.fixture(scope="module")
def built(data: TrainingSet) -> dict[str, SignalClassifier]:
    return fit_classifiers(data)


def test_the_shipped_classifier_is_what_the_build_makes(built: dict[str, SignalClassifier]) -> None:
    assert differences(built, from_bytes(shipped_classifier_bytes())) == []


def test_bytes_round_trip_and_equal_models_give_equal_bytes(built: dict[str, SignalClassifier]) -> None:
    data = to_bytes(built)
    assert to_bytes(from_bytes(data)) == data
    assert differences(from_bytes(data), built) == []


def test_a_model_for_other_signals_or_not_a_model_is_refused(built: dict[str, SignalClassifier]) -> None:
    prose = built["prose"]
    renamed = SignalClassifier(("only_one",), prose.mean[:1], prose.scale[:1], prose.weight[:1], prose.bias)
    with pytest.raises(ValueError, match=r"rebuild it with python -m pretrain_eval\.quality_classifier"):
        from_bytes(to_bytes({**built, "prose": renamed}))
    with pytest.raises(ValueError, match="safetensors expected"):
        from_bytes(b"\x80\x04K\x01.")  # a pickle is not read, let alone run


def test_every_generated_kind_is_separated_on_its_training_documents(
    data: TrainingSet, built: dict[str, SignalClassifier]
) -> None:
    figures = report(data, built)
    for group, kinds in (("prose", PROSE_GENERATORS), ("code", CODE_GENERATORS)):
        per_kind = figures[group]["training_auc_by_kind"]  # type: ignore[index]
        assert set(per_kind) == set(kinds) and min(per_kind.values()) > 0.9, per_kind


def test_leaving_a_kind_out_changes_the_fit(data: TrainingSet, built: dict[str, SignalClassifier]) -> None:
    without = fit_classifiers(data, keep=lambda doc: doc.kind != "mojibake")
    assert not np.allclose(without["prose"].weight, built["prose"].weight)
    assert np.allclose(without["code"].weight, built["code"].weight)
