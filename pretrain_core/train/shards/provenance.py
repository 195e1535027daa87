"""Which corpus build a run reads: every stage's config hash, followed back from the token shards' manifest
through each stage's inputs to ingest, and the hash of the build's data card. Recorded in every checkpoint beside
its bill of materials, so a model names the exact build (and card) its tokens came from."""

from __future__ import annotations

import hashlib
from typing import Any

from pretrain_core import storage
from pretrain_core.manifest import read_manifest

_CARD_FOLDERS = ("card-{hash}", "card")  # storage.layout by_config, then flat (pretrain_core/card/collect.py)


def corpus_provenance(tokens_url: str) -> dict[str, Any]:
    """{"stages": [[stage, config hash], ...] in pipeline order (a list: the checkpoint's JSON sorts mapping keys),
    "card_sha256": the card's hash or None, "tokens_url"}; a stage whose manifest is gone (a build copied without
    it) ends the chain there."""
    stages: dict[str, str] = {}
    root = tokens_url.rstrip("/")
    while storage.exists(storage.join(root, "manifest.json")):
        manifest = read_manifest(storage.join(root, "manifest.json"))
        stages[manifest.stage] = manifest.config_hash
        upstream = [url for url in manifest.inputs if "/data/" in url]
        if not upstream:
            break
        root = upstream[0].rsplit("/data/", 1)[0]
    return {
        "tokens_url": tokens_url,
        "stages": [[name, value] for name, value in reversed(stages.items())],
        "card_sha256": _card_hash(tokens_url, stages),
    }


def _card_hash(tokens_url: str, stages: dict[str, str]) -> str | None:
    build_root = tokens_url.rstrip("/").rsplit("/", 2)[0]  # <root>/corpus/<tokenize folder>
    for folder in _CARD_FOLDERS:
        url = storage.join(build_root, folder.format(hash=stages.get("tokenize", "")[:16]), "card.json")
        if storage.exists(url):
            return hashlib.sha256(storage.read_bytes(url)).hexdigest()
    return None
