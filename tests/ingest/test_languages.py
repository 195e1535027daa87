from __future__ import annotations

from pretrain_core.ingest.languages import language_of


def test_extensions_names_and_overrides() -> None:
    assert language_of("decoder.py", {}) == "python"
    assert language_of("MAIN.C", {}) == "c"
    assert language_of("Dockerfile", {}) == "dockerfile"
    assert language_of("README", {}) is None
    assert language_of(".bashrc", {}) is None
    assert language_of("view.svelte", {".svelte": "svelte"}) == "svelte"
    assert language_of("query.m", {".m": "matlab"}) == "matlab"  # an override wins over the default
