"""Reference models fitted once per reference: the quality fit's tokenisers and n-gram models depend only on the
reference text and the settings, so they are kept under `<root>/cache/quality-models/<key>/`, keyed by a hash of
both, and a later fit on the same reference (a rebuild with another upstream setting, another arm of an ablation)
copies them instead of training them again. The cut-offs, which depend on the corpus, are always measured anew.

A cached model is the bytes a fresh fit writes plus its JSON facts; `info.json` is written last, so a fit killed
half way leaves an entry that is not read. Nothing is unpickled: the files are the artifacts' own formats.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from pretrain_core import storage
from pretrain_core.quality.reference import ReferenceRecord

CACHE_FORMAT = 1  # bump when what a fit writes for a model changes, so older entries are not read
INFO = "info.json"


@dataclass(frozen=True)
class FittedModel:
    """One reference model as the fit writes it: artifact suffix → (file suffix, bytes), and its facts."""

    files: dict[str, tuple[str, bytes]]
    info: dict[str, Any]


def model_key(name: str, kind: str, records: list[ReferenceRecord], fit_settings: dict[str, Any]) -> str:
    """What a model's bytes depend on: its name and tokeniser kind, every reference record (key, language, fold,
    text) in order, and the fit's settings (``fit_settings``: the quality config less what only scoring reads)."""
    digest = hashlib.sha256(json.dumps([CACHE_FORMAT, name, kind, fit_settings], sort_keys=True).encode())
    for record in records:
        digest.update(json.dumps([record.key, record.lang, record.fold, len(record.text)]).encode())
        digest.update(record.text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:32]


class ModelCache:
    def __init__(self, url: str) -> None:
        self.url = url

    def get(self, key: str) -> FittedModel | None:
        folder = storage.join(self.url, key)
        info_url = storage.join(folder, INFO)
        if not storage.exists(info_url):
            return None
        entry = storage.read_json(info_url)
        files = {
            suffix: (file_suffix, storage.read_bytes(storage.join(folder, file_suffix)))
            for suffix, file_suffix in entry["files"].items()
        }
        return FittedModel(files, entry["info"])

    def put(self, key: str, model: FittedModel) -> None:
        folder = storage.join(self.url, key)
        for file_suffix, data in model.files.values():
            storage.write_bytes(storage.join(folder, file_suffix), data)
        files = {suffix: file_suffix for suffix, (file_suffix, _) in model.files.items()}
        storage.write_json(storage.join(folder, INFO), {"files": files, "info": model.info})
