"""What checkpoints a run holds and what each says, without torch: the step directories, which are complete (their
manifest written), the newest, a run or folder resolved to its checkpoint, and a checkpoint's meta (relocated when
its run moved; the settings it was trained under, flat or in sections)."""

from __future__ import annotations

import re
from typing import Any

from pretrain_core import storage
from pretrain_core.train.flat_keys import FLAT_KEYS, into_sections

MANIFEST = "manifest.json"
TOKENIZER_FILE = "tokenizer.model"  # the SentencePiece model, inside every checkpoint and export
EVALUATIONS = "evaluations"  # <output_url>/evaluations/step-NNNNNNNN[.failed].json: the durable evaluation record
ANNOUNCED = "announced"  # <output_url>/announced/step-NNNNNNNN: the checkpoint's event reached the API
STEP_DIR = re.compile(r"step-(\d{8})$")
EVALUATION_FILE = re.compile(r"step-(\d{8})\.json")


def checkpoints_root(output_url: str) -> str:
    return storage.join(output_url, "checkpoints")


def checkpoint_url(output_url: str, step: int) -> str:
    return storage.join(checkpoints_root(output_url), f"step-{step:08d}")


def step_dirs(output_url: str) -> dict[int, str]:
    """Every step directory, complete or not, by step."""
    root = checkpoints_root(output_url)
    fs, path = storage.filesystem(root)
    fs.invalidate_cache(path)  # object stores cache listings; another rank or process may have written since
    if not fs.exists(path):
        return {}
    found = {}
    for entry in fs.ls(path, detail=False):
        match = STEP_DIR.search(entry.rstrip("/"))
        if match:
            found[int(match.group(1))] = storage.join(root, match.group(0))
    return found


def completed(output_url: str) -> list[tuple[int, str, bool]]:
    """(step, url, ephemeral) of checkpoints whose manifest was written, oldest first."""
    found = []
    for step, url in sorted(step_dirs(output_url).items()):
        if storage.exists(manifest_url(url)):
            found.append((step, url, bool(storage.read_json(manifest_url(url)).get("ephemeral", False))))
    return found


def completed_checkpoints(output_url: str, ephemeral: bool = False) -> list[tuple[int, str]]:
    """(step, url) of the complete permanent checkpoints, oldest first: what is announced, evaluated and kept.
    With ``ephemeral`` the ephemeral ones too (saves for recovery only, deleted once a newer save completes)."""
    return [(step, url) for step, url, passing in completed(output_url) if ephemeral or not passing]


def latest_checkpoint(output_url: str) -> str | None:
    """The newest complete checkpoint, ephemeral or not: where a run resumes or rolls back to."""
    done = completed_checkpoints(output_url, ephemeral=True)
    return done[-1][1] if done else None


def resolve_checkpoint(url: str) -> str:
    """A checkpoint directory as is; a training output directory resolves to its latest complete checkpoint, and
    a folder of training outputs (`<root>/train`, one `corpus-<hash>` run per corpus build) to its run's when it
    holds one run with checkpoints (several: an error naming each)."""
    if storage.exists(storage.join(url, MANIFEST)):
        return url
    latest = latest_checkpoint(url)
    if latest is not None:
        return latest
    runs = [(run, found) for run in storage.list_dirs(url) if (found := latest_checkpoint(run)) is not None]
    if len(runs) == 1:
        return runs[0][1]
    if runs:
        named = ", ".join(f"{run} (step {int(found.rsplit('-', 1)[-1])})" for run, found in runs)
        raise ValueError(f"{url} holds {len(runs)} training runs: name one of {named}")
    raise FileNotFoundError(f"{url} is neither a complete checkpoint nor a training output with one")


def manifest_url(url: str) -> str:
    return storage.join(url, MANIFEST)


def saved_setting(meta: dict[str, Any], name: str, default: Any = None) -> Any:
    """A setting of the config a checkpoint was trained under, by its flat name (`tokens_url`, `mask_rate`)."""
    section, field = FLAT_KEYS[name]
    config = into_sections(meta.get("config", {}), warn=False)  # a checkpoint saved before the sections, too
    return config.get(section, {}).get(field, default)


def read_meta(url: str) -> dict[str, Any]:
    """A checkpoint's meta; when its run has been moved, copied or synced since (with the build root around it),
    the token shards and tokenizer it names are looked up where they lie relative to the run now, if they are
    there."""
    meta: dict[str, Any] = storage.read_json(storage.join(url, "meta.json"))
    config = meta["config"] = into_sections(meta.get("config", {}), warn=False)  # saved before the sections, too
    run_then, run_now = config.get("output_url"), url.rstrip("/").rsplit("/checkpoints/", 1)[0]
    if run_then is None or run_now == url.rstrip("/"):
        return meta  # a checkpoint outside a run's checkpoints/ folder: nothing to relocate by
    data = config.setdefault("data", {})
    for holder, key in ((data, "tokens_url"), (data, "tokenizer_url"), (meta, "tokenizer_url")):
        there = storage.moved(holder[key], run_then, run_now) if holder.get(key) else None
        if there is not None and there != holder[key] and storage.exists(there):  # no lookup for a run in place
            holder[key] = there
    return meta
