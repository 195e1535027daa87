"""When checkpoints are saved, kept and pruned, and where a run starts from."""

from __future__ import annotations

from pydantic import Field

from pretrain_core.config_base import StrictModel
from pretrain_core.limits import MAX_CHECKPOINTS, MAX_MINUTES, MAX_STEPS


class CheckpointConfig(StrictModel):
    """Saving, keeping and resuming."""

    checkpoint_every: int = Field(
        le=MAX_STEPS, default=100, ge=1, description="Save a checkpoint every this many steps (and at the end)."
    )
    checkpoint_every_minutes: float | None = Field(
        default=60.0,
        gt=0,
        le=MAX_MINUTES,
        description="Also save when this many minutes have passed since the last save (the articles: hourly), "
        "so a slow run loses at most that much to a crash. Unset: by steps only.",
    )
    ephemeral_checkpoint_every: int | None = Field(
        default=None,
        ge=1,
        le=MAX_STEPS,
        description="Also save this often for recovery only (OLMo-core's ephemeral checkpoints): such a save is "
        "never announced or evaluated and is deleted once a newer one completes, so frequent saves cost one "
        "checkpoint of disk. Unset: none.",
    )
    async_checkpoints: bool = Field(
        default=False,
        description="Write each checkpoint's shards in the background: training stops only to copy its shards to "
        "CPU memory, and a save waits only for the one before it. Off: training waits for every write.",
    )
    keep_last_checkpoints: int = Field(
        default=2,
        ge=1,
        le=MAX_CHECKPOINTS,
        description="Completed checkpoints kept; older ones are deleted once evaluated.",
    )
    keep_best_checkpoint: bool = Field(
        default=False, description="Also keep the checkpoint with the lowest validation loss, however old."
    )
    prune_waits_for_evaluation: bool = Field(
        default=True,
        description="Delete an old checkpoint only once its evaluation is recorded (done, or failed with a reason), "
        "so a slow evaluation queue never loses one. Off for runs nobody evaluates.",
    )
    max_unevaluated_checkpoints: int = Field(
        default=4,
        ge=1,
        le=MAX_CHECKPOINTS,
        description="With prune_waits_for_evaluation: while this many checkpoints await evaluation, a periodic save "
        "is skipped (logged); the final and SIGTERM saves never are. Disk then holds at most keep_last_checkpoints "
        "+ this many + 1 checkpoints however far evaluation falls behind, and training never waits for it.",
    )
    resume_despite_changes: bool = Field(
        default=False,
        description="Resume even when the global batch (tokens per step) or the training data differ from the "
        "checkpoint's; off, such a resume is refused, since its data order and schedule would silently shift.",
    )
    init_from: str | None = Field(
        default=None,
        description="Start from this checkpoint's weights (a checkpoint directory or a training output), with a "
        "fresh optimizer and schedule: context extension (a longer seq_len with a rope_scaling) or continued "
        "training. Ignored once the run has a checkpoint of its own (it resumes from that).",
    )
