"""Score one proxy checkpoint on the shared held-out set: bits per byte per domain (every token of each document
predicted once, whatever the arm's tokenizer) and the zero-shot tasks built from the same text."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import torch

from pretrain_core import storage
from pretrain_core.ablation.heldout import read_heldout
from pretrain_core.evaluate.zero_shot import TaskItem, build_items, document_logprob, score_items
from pretrain_core.export.bundle import load_bundle
from pretrain_core.train.checkpoint.catalog import read_meta

ITEMS_FILE = "zero_shot_items.json"


def write_items(heldout_url: str, per_group: int, seed: int) -> str:
    """The zero-shot items of the held-out text, stored beside it (every checkpoint is scored on these)."""
    texts = read_heldout(heldout_url)["text"].to_pylist()
    items = build_items(texts, per_group, seed) if per_group else []
    url = storage.join(heldout_url.rsplit("/", 1)[0], ITEMS_FILE)
    storage.write_json(url, [dataclasses.asdict(item) for item in items])
    return url


def read_items(url: str) -> list[TaskItem]:
    return [TaskItem(**{**row, "choices": tuple(row["choices"])}) for row in storage.read_json(url)]


@torch.no_grad()
def score_checkpoint(checkpoint_url: str, heldout_url: str, items_url: str | None) -> list[dict[str, Any]]:
    """Rows of (metric, group, value, stderr) for one checkpoint: `bits_per_byte` per domain and `all`, and with
    ``items_url`` `accuracy` / `centred_accuracy` per zero-shot task group."""
    bundle = load_bundle(checkpoint_url)
    model, tokenizer = bundle.model, bundle.tokenizer
    start = max(tokenizer.eos_id(), 0)
    heldout = read_heldout(heldout_url)
    nats: dict[str, float] = {}
    n_bytes: dict[str, int] = {}
    for domain, text in zip(heldout["domain"].to_pylist(), heldout["text"].to_pylist(), strict=True):
        logprob = document_logprob(model, [start, *tokenizer.encode(text)])
        for group in (domain, "all"):
            nats[group] = nats.get(group, 0.0) - logprob
            n_bytes[group] = n_bytes.get(group, 0) + len(text.encode("utf-8"))
    rows = [
        {"metric": "bits_per_byte", "group": g, "value": nats[g] / (math.log(2) * n_bytes[g]), "stderr": None}
        for g in sorted(nats)
    ]
    for group, score in (score_items(model, tokenizer, read_items(items_url)) if items_url else {}).items():
        rows.append({"metric": "accuracy", "group": group, "value": score.accuracy, "stderr": score.stderr})
        if score.centred_accuracy is not None:
            rows.append({"metric": "centred_accuracy", "group": group, "value": score.centred_accuracy, "stderr": None})
    meta = read_meta(bundle.source_url)
    return [{**row, "step": bundle.step, "tokens_seen": int(meta.get("tokens_seen", 0))} for row in rows]
