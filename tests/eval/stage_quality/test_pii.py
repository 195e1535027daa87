"""The PII stage against the naive regex set on a slice of the labelled PII set (data/labelled/pii)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pretrain_eval.pii_tagger.training_data import _FRAMES
from pretrain_eval.stage_quality.figures import OURS, Figure
from pretrain_eval.stage_quality.pii import (
    BASELINE,
    DECOY_BAR,
    LOCALES,
    NAMES_GROUP,
    STRUCTURED_BAR,
    LabelledItem,
    detect_naive,
    evaluate,
    load_items,
    score,
)

SET_DIR = str(Path(__file__).resolve().parents[3] / "data" / "labelled" / "pii")
NAMES_DIR = str(Path(SET_DIR) / "names")
BUILDER = Path(__file__).resolve().parents[3] / "scripts" / "build_labelled_pii.py"
LIMIT = 600  # about one item in nine: every type, decoy kind and locale
STRUCTURED = ("email", "phone", "ip", "card", "iban", "national_id", "secret")


@pytest.fixture(scope="module")
def items() -> list[LabelledItem]:
    return load_items(SET_DIR, LIMIT)


@pytest.fixture(scope="module")
def figures() -> dict[tuple[str, str, str], Figure]:
    return {(f.group, f.system, f.metric): f for f in evaluate(SET_DIR, LIMIT)}


def test_the_slice_covers_every_type_locale_and_decoy(items: list[LabelledItem]) -> None:
    assert len(items) == LIMIT and load_items(SET_DIR, LIMIT) == items  # the same slice every time
    assert {s.type for i in items for s in i.spans} == {*STRUCTURED, "person", "address"}
    assert {i.lang for i in items} == set(LOCALES)
    assert len({d.kind for i in items for d in i.decoys}) == 10
    for item in items:
        for span in item.spans:
            value = item.text[span.start : span.end]
            assert value == value.strip() and value, item.id


def test_every_type_has_figures_for_both_systems_with_bars_on_ours_only(
    figures: dict[tuple[str, str, str], Figure],
) -> None:
    for kind in (*STRUCTURED, "person", "address"):
        for system in (OURS, BASELINE):
            for metric in ("precision", "recall", "f1", "f2"):
                figure = figures[(kind, system, metric)]
                assert 0.0 <= figure.value <= 1.0 and figure.support > 0
                assert (figure.bar is not None) == (system == OURS and metric in ("precision", "recall"))
    assert figures[("decoys", OURS, "false_positive_rate")].bar == DECOY_BAR
    assert ("person/zh", OURS, "recall") in figures and ("person/code", OURS, "recall") not in figures


def test_structured_types_meet_their_bar_and_decoys_stay_untouched(
    figures: dict[tuple[str, str, str], Figure],
) -> None:
    """Pattern detectors do not depend on the tagger's fit, so the slice holds them to the full-set bar."""
    for kind in STRUCTURED:
        for metric in ("precision", "recall"):
            assert STRUCTURED_BAR.met_by(figures[(kind, OURS, metric)].value), (kind, metric)
    assert DECOY_BAR.met_by(figures[("decoys", OURS, "false_positive_rate")].value)
    assert figures[("decoys", BASELINE, "false_positive_rate")].value > 0.2  # ISBNs, order numbers, dates


def test_the_baseline_replaces_in_order_as_the_benchmark_does() -> None:
    text = "Call +1 415 555 2671 or mail bob@example.org; card 4111 1111 1111 1111."
    kinds = [(s.type, text[s.start : s.end]) for s in detect_naive(text)]
    assert ("email", "bob@example.org") in kinds and ("phone", "+1 415 555 2671") in kinds
    assert ("phone", "4111 1111 1111 1111") in kinds  # the digit-run phone pattern runs before the card one


def test_overlap_matching_counts_a_partly_found_value_once() -> None:
    item = load_items(SET_DIR, 1)[0]  # an email item
    gold = item.spans[0]
    half = gold._replace(end=gold.start + max(1, (gold.end - gold.start) // 2))
    tally = score([item], [[half]]).tallies[gold.type]
    assert (tally.correct, tally.predicted, tally.found, tally.gold) == (1, 1, 1, len(item.spans))


def test_eval_frames_are_not_the_tagger_training_frames() -> None:
    """Held-out templates: no frame of the set (as written in its builder) is one the tagger trains on."""
    source = BUILDER.read_text(encoding="utf-8")

    def normal(frame: str) -> str:
        return frame.replace("{name", "{person").replace("{s_lower}", "{s}").replace("\\n", "\n")

    trained = {normal(frame) for frames in _FRAMES.values() for frame in frames}
    written = set(re.findall(r'^\s+"((?:[^"\\]|\\.)*\{(?:person|address)[^"]*)",$', source, re.MULTILINE))
    assert len(written) > 50
    assert not {normal(w) for w in written} & trained


def test_real_name_figures_carry_the_tagger_bars_on_the_whole_set_and_its_test_split(
    figures: dict[tuple[str, str, str], Figure],
) -> None:
    """The hand-labelled real-text set (data/labelled/pii/names) is scored whole, by split and by language."""
    for group in (NAMES_GROUP, f"{NAMES_GROUP}/test"):
        assert figures[(group, OURS, "precision")].bar is not None and figures[(group, OURS, "recall")].bar
    dev, test = figures[(f"{NAMES_GROUP}/dev", OURS, "recall")], figures[(f"{NAMES_GROUP}/test", OURS, "recall")]
    assert dev.bar is None and dev.support + test.support == figures[(NAMES_GROUP, OURS, "recall")].support > 250
    assert figures[(f"{NAMES_GROUP}/zh", OURS, "recall")].support > 100


def test_real_name_labels_mark_exactly_the_annotated_names() -> None:
    items = load_items(NAMES_DIR)
    annotations = {
        row["id"]: set(row["names"])
        for row in map(json.loads, Path(NAMES_DIR, "annotations.jsonl").read_text(encoding="utf-8").splitlines())
    }
    assert {i.id for i in items} == set(annotations) and len(items) == 380
    for item in items:
        assert {item.text[s.start : s.end] for s in item.spans} == annotations[item.id], item.id


def test_the_shipped_real_name_set_is_what_its_builder_makes() -> None:
    builder = BUILDER.with_name("build_labelled_pii_names.py")
    done = subprocess.run([sys.executable, str(builder), "--check"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
