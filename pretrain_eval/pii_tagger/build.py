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
from pretrain_eval.pii_tagger.training_data import build_examples

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


@dataclass(frozen=True)
class BuiltTagger:
    tagger: NameAddressTagger
    report: dict[str, Any]


def build_tagger(build: TaggerBuild) -> BuiltTagger:
    """Train the tagger and measure it on held-out sentences and names. One BLAS thread: lbfgs then gives the
    same bytes on every run, whatever the machine's core count."""
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
    return BuiltTagger(tagger, report)


def shipped_dir() -> Path:
    """Where the package keeps its data (in a checkout or an editable install: the source tree)."""
    return Path(str(resources.files("pretrain_core") / "data"))


def write(built: BuiltTagger, directory: Path) -> None:
    (directory / SHIPPED_MODEL).write_bytes(built.tagger.to_bytes())
    (directory / REPORT_FILE).write_text(json.dumps(built.report, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def differences(built: NameAddressTagger, shipped: NameAddressTagger, atol: float = 1e-5) -> list[str]:
    """How a fresh build differs from the shipped model: vocabularies and feature keys exactly, weights within
    `atol` (another CPU's BLAS may round the last bits differently)."""
    found = []
    for name, value in built.featurizer.__getstate__().items():
        if value != getattr(shipped.featurizer, name):
            found.append(f"featurizer {name} differs")
    if not np.array_equal(built.keys, shipped.keys):
        found.append("feature keys differ")
    elif not (
        np.allclose(built.weights, shipped.weights, atol=atol) and np.allclose(built.bias, shipped.bias, atol=atol)
    ):
        worst = float(np.abs(built.weights - shipped.weights).max())
        found.append(f"weights differ by up to {worst:.2e} (tolerance {atol:.0e})")
    return found
