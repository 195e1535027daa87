"""Build the shipped reference's quality models into the package (`make setup` runs it), so that a fresh output
root copies them instead of training them: about 17 CPU s of every first `pretrain corpus`
(docs/benchmarks.md, "Every cost that does not grow with the corpus").

    python -m pretrain_core.quality.prebuild
"""

from __future__ import annotations

from pretrain_core.quality.config import QualityConfig
from pretrain_core.quality.stage import PREBUILT_MODELS, prebuild_reference_models


def main() -> None:
    keys = prebuild_reference_models(QualityConfig(), str(PREBUILT_MODELS))
    print(f"{len(keys)} quality reference models under {PREBUILT_MODELS}")


if __name__ == "__main__":
    main()
