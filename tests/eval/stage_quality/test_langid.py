"""Language id against raw langdetect on a slice of the labelled snippet set (data/labelled/langid)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pretrain_eval.stage_quality.figures import OURS, Figure
from pretrain_eval.stage_quality.langid import (
    BASELINE,
    BUCKET_BARS,
    clean_stage_detector,
    evaluate,
    langdetect_detector,
    load_snippets,
)

SET_DIR = str(Path(__file__).resolve().parents[3] / "data" / "labelled" / "langid")
LIMIT = 360  # snippets spread over the file: every language and bucket
LANGUAGES = {"de", "en", "es", "fr", "it", "ja", "ko", "nl", "pt", "ru", "zh"}


@pytest.fixture(scope="module")
def figures() -> dict[tuple[str, str, str], Figure]:
    return {(f.group, f.system, f.metric): f for f in evaluate(SET_DIR, LIMIT)}


def test_the_slice_covers_every_language_and_bucket() -> None:
    snippets = load_snippets(SET_DIR, LIMIT)
    assert len(snippets) == LIMIT
    assert {s.lang for s in snippets} == LANGUAGES
    assert {s.bucket for s in snippets} == set(BUCKET_BARS)
    assert all(20 <= len(s.text) <= 1000 for s in snippets)


def test_figures_for_every_group_and_both_systems(figures: dict[tuple[str, str, str], Figure]) -> None:
    groups = {f"length={b}" for b in BUCKET_BARS} | {f"lang={lang}" for lang in LANGUAGES} | {"all"}
    for system in (OURS, BASELINE):
        assert {g for g, s, m in figures if s == system and m == "accuracy"} == groups
    assert all(0.0 <= f.value <= 1.0 for f in figures.values())
    barred = {(g, s, m) for g, s, m in figures if s == OURS and (g.startswith("length=") or m == "rerun_agreement")}
    assert {key for key, f in figures.items() if f.bar is not None} == barred


def test_ours_meets_the_bars_and_beats_langdetect_on_short_snippets(
    figures: dict[tuple[str, str, str], Figure],
) -> None:
    for bucket in BUCKET_BARS:
        assert figures[f"length={bucket}", OURS, "accuracy"].meets_bar, bucket
    short = "length=20-50"
    assert figures[short, OURS, "accuracy"].value > figures[short, BASELINE, "accuracy"].value
    assert figures["all", OURS, "rerun_agreement"].value == 1.0


def test_hard_items_are_told_apart() -> None:
    ours, baseline = clean_stage_detector(), langdetect_detector()
    # Dutch that langdetect calls Afrikaans (dpkg-maintscript-helper(1)); Japanese around an English term
    # (Debian handbook); classical Chinese that langdetect calls Korean (Shijing, fortunes-zh)
    items = {
        "Indien de omgeving niet": "nl",
        "たとえば、x-window-manager": "ja",
        "亂匪降自天，生自婦人。匪教匪誨，時維婦寺。": "zh",
    }
    for text, lang in items.items():
        assert ours(text) == lang
        assert baseline(text) != lang


def test_a_fresh_process_gives_the_same_answers() -> None:
    snippets = load_snippets(SET_DIR, 120)
    texts = [s.text for s in snippets]
    script = (
        "import json, sys\n"
        "from pretrain_eval.stage_quality.langid import clean_stage_detector\n"
        "detect = clean_stage_detector()\n"
        "print(json.dumps([detect(t) for t in json.load(sys.stdin)]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], input=json.dumps(texts), capture_output=True, text=True, check=True, timeout=120
    )
    detect = clean_stage_detector()
    assert json.loads(result.stdout) == [detect(t) for t in reversed(texts)][::-1]
