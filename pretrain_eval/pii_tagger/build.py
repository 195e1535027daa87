"""Build the name/address tagger the package ships, with its held-out report, from text in this checkout.

The pipeline never trains it: `pretrain_core/data/pii_tagger.safetensors` is what this writes, and a test
checks the shipped file is what this builds. Run it after changing the tagger's features, its training
examples or the sources below:

    python -m pretrain_eval.pii_tagger            # rebuild the shipped model and report
    python -m pretrain_eval.pii_tagger --check    # exit 1 when the shipped model differs from a fresh build
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import Field
from threadpoolctl import threadpool_limits

from pretrain_core.config_base import StrictModel
from pretrain_core.pii.classifier import SHIPPED_MODEL, NameAddressTagger
from pretrain_core.pii.config import PiiConfig
from pretrain_eval.pii_tagger.evaluation import evaluate
from pretrain_eval.pii_tagger.fit import fit_tagger
from pretrain_eval.pii_tagger.names import name_lists
from pretrain_eval.pii_tagger.text_sources import load_sentences
from pretrain_eval.pii_tagger.training_data import Example, build_examples

REPORT_FILE = "pii_tagger_report.json"


class TaggerBuild(StrictModel):
    """What the shipped tagger is trained on: real prose in its five languages, read from this checkout."""

    sources: list[str] = Field(
        default=[
            # Licence texts, Vim tutors, CPython's CJK codec test texts and the demo corpus's manual pages in en,
            # de, fr, ja and zh; '{data}' is the checkout's data/ directory, '{demo}' the package's demo corpus.
            "{data}/reference/licences/*",
            "{data}/reference/vim-tutor/*",
            "{data}/reference/cjkencodings/*",
            "{demo}/text/manpages/en/**/*.txt",
            "{demo}/text/manpages/de/**/*.txt",
            "{demo}/text/manpages/fr/**/*.txt",
            "{demo}/text/manpages/ja/**/*.txt",
            "{demo}/text/manpages/zh_CN/**/*.txt",
        ],
        min_length=1,
        description="Glob patterns of real text whose sentences become training templates and negatives.",
    )
    sentences_per_source: int = Field(default=3000, ge=10, description="Sentences read per pattern at most.")
    examples_per_language: int = Field(
        default=2000, ge=50, description="Training examples per language (a quarter as many per held-out set)."
    )
    seed: int = Field(default=0, ge=0, description="Seed for sampling sentences, fake names and splits.")
    threshold: float = Field(
        default=PiiConfig().classifier_threshold, gt=0, lt=1, description="Threshold the report measures at."
    )


# How far a fresh build may sit from the shipped one. lbfgs stops within its tolerance of the optimum, and where
# it stops depends on how the CPU's BLAS kernel rounds: measured 2026-12-06, builds under OpenBLAS's Zen,
# Sandybridge and Prescott kernels differ from the SkylakeX build by 1.4e-4, 4.1e-4 and 1.5e-3 in the weights
# (the largest is 5.9) and by 2.3e-4 at most in the bias, with not one held-out span changed. The bars leave
# about 3x room over the worst kernel measured.
WEIGHT_TOLERANCE = 5e-3
# Share of held-out examples whose spans may differ between a fresh build and the shipped model (measured: 0).
DECISION_TOLERANCE = 1e-3
# Largest change of a held-out precision or recall figure against the shipped report (measured: 0).
REPORT_TOLERANCE = 5e-3


@dataclass(frozen=True)
class BuiltTagger:
    tagger: NameAddressTagger
    report: dict[str, Any]
    held_out: list[Example]  # every held-out example the report measured, to compare decisions on


def build_tagger(build: TaggerBuild) -> BuiltTagger:
    """Train the tagger and measure it on held-out sentences and names. One BLAS thread: lbfgs then gives the
    same bytes on every run of one machine, whatever its core count (another CPU's BLAS kernel rounds
    differently: see `WEIGHT_TOLERANCE`)."""
    sentences = load_sentences(build.sources, build.sentences_per_source)
    examples = build_examples(sentences, build.examples_per_language, build.seed)
    if not examples["train"]:
        raise ValueError(f"no sentences in en/de/fr/zh/ja found under {build.sources}")
    with threadpool_limits(1):
        tagger = fit_tagger(examples["train"], name_lists())
    report: dict[str, Any] = {
        "threshold": build.threshold,
        "sentences": {lang: len(found) for lang, found in sentences.items()},
        "examples": {name: len(found) for name, found in examples.items()},
        **{name: evaluate(tagger, found, build.threshold) for name, found in examples.items() if name != "train"},
    }
    held_out = [example for name, found in examples.items() if name != "train" for example in found]
    return BuiltTagger(tagger, report, held_out)


def shipped_dir() -> Path:
    """Where the package keeps its data (in a checkout or an editable install: the source tree)."""
    return Path(str(resources.files("pretrain_core") / "data"))


def write(built: BuiltTagger, directory: Path) -> None:
    (directory / SHIPPED_MODEL).write_bytes(built.tagger.to_bytes())
    (directory / REPORT_FILE).write_text(json.dumps(built.report, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def differences(built: BuiltTagger, shipped: NameAddressTagger, shipped_report: dict[str, Any]) -> list[str]:
    """How a fresh build differs from the shipped model in what users see: vocabularies and feature keys exactly,
    weights within `WEIGHT_TOLERANCE`, the spans found in held-out text and the report's figures within their
    tolerances. Never bit-equality: that holds on the machine that built the file only."""
    found = _structure_differences(built.tagger, shipped)
    if found:
        return found
    worst = max(
        _largest_change(built.tagger.weights, shipped.weights), _largest_change(built.tagger.bias, shipped.bias)
    )
    if worst > WEIGHT_TOLERANCE:
        found.append(f"weights differ by up to {worst:.2e} (tolerance {WEIGHT_TOLERANCE:.0e})")
    changed = changed_decisions(built.tagger, shipped, built.held_out, built.report["threshold"])
    if changed > DECISION_TOLERANCE:
        found.append(f"spans differ on {changed:.2%} of held-out examples (tolerance {DECISION_TOLERANCE:.1%})")
    found.extend(report_differences(built.report, shipped_report))
    return found


def changed_decisions(
    built: NameAddressTagger, shipped: NameAddressTagger, examples: list[Example], threshold: float
) -> float:
    """Share of `examples` in which the two taggers find different spans."""
    texts = [e.text for e in examples]
    pairs = zip(built.find_spans(texts, threshold), shipped.find_spans(texts, threshold), strict=True)
    return sum(a != b for a, b in pairs) / max(1, len(texts))


def report_differences(built: dict[str, Any], shipped: dict[str, Any]) -> list[str]:
    """Report figures that moved by more than `REPORT_TOLERANCE`, and counts that changed."""
    found = [f"report's {key} differ" for key in ("threshold", "sentences", "examples") if built[key] != shipped[key]]
    for split in sorted(
        set(built) - {"threshold", "sentences", "examples"} | set(shipped) - {"threshold", "sentences", "examples"}
    ):
        mine, theirs = built.get(split, {}), shipped.get(split, {})
        if set(mine) != set(theirs):
            found.append(f"report's {split}: groups differ")
            continue
        for group in sorted(mine):
            for figure in ("precision", "recall"):
                moved = abs(mine[group][figure] - theirs[group][figure])
                if moved > REPORT_TOLERANCE:
                    found.append(f"report's {split} {group} {figure} moved by {moved:.4f}")
    return found


def _structure_differences(built: NameAddressTagger, shipped: NameAddressTagger) -> list[str]:
    found = [
        f"featurizer {name} differs"
        for name, value in built.featurizer.__getstate__().items()
        if value != getattr(shipped.featurizer, name)
    ]
    if not np.array_equal(built.keys, shipped.keys):
        found.append("feature keys differ")
    return found


def _largest_change(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)).max(initial=0.0))
