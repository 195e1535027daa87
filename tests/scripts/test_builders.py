"""Every shipped labelled set is what its builder makes from the repository alone: each builder's `--check`
rebuilds the set in a temporary directory and compares it byte for byte, README included, while the hermetic guard
fails any read of this machine's files. (The builders that read installed files replay them from a recorded
archive: test_source_snapshot.py.)"""

from __future__ import annotations

import importlib

import pytest


@pytest.mark.parametrize(
    "builder_name",
    [
        # 90 s of near-duplicate search over the whole labelled set: end to end, with the slow tests
        pytest.param("build_labelled_dedup", marks=pytest.mark.slow),
        "build_labelled_langid",
        "build_labelled_pii",
        "build_labelled_pii_names",
        "build_labelled_quality_heldout",
        "build_labelled_tokenizer",
        "build_name_senses",
    ],
)
def test_every_other_shipped_set_is_what_its_builder_makes_from_the_repository(
    builder_name: str, scripts_on_path: None
) -> None:
    assert importlib.import_module(builder_name).main(["--check"]) == 0
