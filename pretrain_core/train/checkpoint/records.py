"""The durable records beside a run's checkpoints: which were announced and evaluated (they outlive the checkpoints),
and pruning, which keeps the newest, the best and the ones still awaiting evaluation."""

from __future__ import annotations

from typing import Any

from pretrain_core import storage
from pretrain_core.train.checkpoint.catalog import (
    ANNOUNCED,
    EVALUATION_FILE,
    EVALUATIONS,
    STEP_DIR,
    completed,
    completed_checkpoints,
    read_meta,
    step_dirs,
)
from pretrain_core.train.flat_keys import into_sections


def evaluation_url(output_url: str, step: int, failed: bool = False) -> str:
    """Where a checkpoint's evaluation is recorded for good: beside the checkpoints, so it outlives pruning."""
    return storage.join(output_url, EVALUATIONS, f"step-{step:08d}{'.failed' if failed else ''}.json")


def mark_announced(output_url: str, step: int) -> None:
    """Record for good that the checkpoint's event was delivered: a resumed run announces exactly the checkpoints
    this record lacks (its killed attempt's last ones, the SIGTERM checkpoint among them), not what is on disk."""
    storage.write_bytes(storage.join(output_url, ANNOUNCED, f"step-{step:08d}"), b"")


def announced_steps(output_url: str) -> set[int]:
    """The steps whose checkpoint event was delivered, by any attempt of the run."""
    found = (STEP_DIR.search(name) for name in storage.names_in(storage.join(output_url, ANNOUNCED)))
    return {int(match.group(1)) for match in found if match}


def unevaluated_checkpoints(output_url: str, up_to_step: int | None = None) -> list[tuple[int, str]]:
    """(step, url) of complete checkpoints with no evaluation recorded, oldest first (up to ``up_to_step``)."""
    return [
        (step, url)
        for step, url in completed_checkpoints(output_url)
        if (up_to_step is None or step <= up_to_step) and not is_evaluated(output_url, step)
    ]


def evaluated_steps(output_url: str) -> list[int]:
    """The steps whose evaluation is recorded as done (not failed), in order."""
    found = (EVALUATION_FILE.fullmatch(name) for name in storage.names_in(storage.join(output_url, EVALUATIONS)))
    return sorted(int(match.group(1)) for match in found if match)


def is_evaluated(output_url: str, step: int) -> bool:
    """Whether the checkpoint's evaluation is recorded: done, or failed with its reason."""
    return storage.exists(evaluation_url(output_url, step)) or storage.exists(evaluation_url(output_url, step, True))


def prune_checkpoints(
    output_url: str, keep_last: int, wait_for_evaluation: bool = False, keep_best: bool = False
) -> list[int]:
    """Keep the newest ``keep_last`` complete permanent checkpoints (and with ``keep_best`` the lowest validation
    loss); drop older ones, but with ``wait_for_evaluation`` only those whose evaluation is recorded, every
    ephemeral one but the newest checkpoint, and leftovers of interrupted saves. Returns the steps deleted."""
    every = completed(output_url)
    done = [(step, url) for step, url, ephemeral in every if not ephemeral]
    if not every:
        return []
    keep = {step for step, _ in done[-keep_last:]}
    if keep_best and (losses := {step: read_meta(url).get("validation_loss") for step, url in done}):
        scored = {step: loss for step, loss in losses.items() if loss is not None}
        if scored:
            keep.add(min(scored, key=lambda step: (scored[step], step)))
    complete = {step for step, _ in done}
    newest = every[-1][0]
    deleted = []
    for step, url in sorted(step_dirs(output_url).items()):
        if step in keep or step >= newest:
            continue
        if step in complete and wait_for_evaluation and not is_evaluated(output_url, step):
            continue
        storage.remove(url)
        deleted.append(step)
    return deleted


def prune_as_configured(output_url: str, config: dict[str, Any]) -> list[int]:
    """Prune with the settings of the run's config (a `TrainConfig` dumped into every checkpoint's meta)."""
    settings = into_sections(config, warn=False).get("checkpoint", {})  # saved before the sections, too
    return prune_checkpoints(
        output_url,
        int(settings.get("keep_last_checkpoints", 2)),
        bool(settings.get("prune_waits_for_evaluation", False)),
        bool(settings.get("keep_best_checkpoint", False)),
    )
