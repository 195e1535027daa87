"""Tasks for training and evaluation: a training run supervised (`pretrain_core.train.launch.supervisor`) with its
events sent to Prefect (logs, progress, checkpoint and health events, the loss curve), and one checkpoint evaluated.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from functools import partial
from uuid import UUID

from prefect import get_run_logger, task
from prefect.artifacts import (
    create_markdown_artifact,
    create_progress_artifact,
    create_table_artifact,
    update_progress_artifact,
)
from prefect.cache_policies import NO_CACHE
from prefect.events import emit_event

from pretrain_core import storage
from pretrain_core.evaluate.evaluator import EvalResult, evaluate_checkpoint
from pretrain_core.evaluate.trend_plot import plotting_available
from pretrain_core.train.config import EvalConfig, TrainConfig
from pretrain_core.train.launch.supervisor import SupervisorHooks, TrainingSupervisor
from pretrain_core.train.observe.health import parse_health_event
from pretrain_core.train.observe.loss_plot import loss_curve_url, render_loss_curve
from pretrain_core.train.observe.monitor import TrainingMonitor
from pretrain_core.train.shards.bill_report import bill_lines
from tasks.progress import artifact_key

CHECKPOINT_SAVED = "pretrain.checkpoint.saved"


def run_resource(run_name: str) -> dict[str, str]:
    """The resource checkpoint events are about; automations match `pretrain.run.*`."""
    return {"prefect.resource.id": f"pretrain.run.{run_name}", "prefect.resource.name": run_name}


def announce_checkpoint(run_name: str, step: int, checkpoint_url: str) -> bool:
    """Emit `pretrain.checkpoint.saved`; False (and a warning) when no API took it, which emit_event only
    signals by returning None."""
    event = emit_event(
        CHECKPOINT_SAVED, resource=run_resource(run_name), payload={"checkpoint_url": checkpoint_url, "step": step}
    )
    if event is None:
        get_run_logger().warning("checkpoint event for step %d of %s was not delivered", step, run_name)
    return event is not None


def announce_health(run_name: str, line: str) -> bool:
    """Emit `pretrain.training.loss-spike` or `pretrain.training.straggler` when ``line`` is rank 0's report of
    one (`pretrain_core.train.observe.health`), so an automation can act on it; False for any other line."""
    event = parse_health_event(line)
    if event is None:
        return False
    payload = {"step": event.step, **event.values}
    return emit_event(f"pretrain.training.{event.kind}", resource=run_resource(run_name), payload=payload) is not None


def evaluation_markdown(result: EvalResult) -> str:
    """What an engineer reads in the UI after a checkpoint: zero-shot tasks, sample figures, probes, samples, and
    the bill of materials of the tokens it was trained on."""
    lines = [f"# Step {result.step}: tasks, samples and probes\n"]
    if result.tasks:
        lines += ["| task | items | accuracy ± s.e. | centred | chance |", "|---|---:|---:|---:|---:|"]
        for name, task in result.tasks.items():
            centred = "" if task.centred_accuracy is None else f"{task.centred_accuracy:+.3f}"
            lines.append(
                f"| {name} | {task.items} | {task.accuracy:.3f} ± {task.stderr:.3f} | {centred} | {task.chance:.2f} |"
            )
    if result.generation is not None:
        g = result.generation
        lines.append(
            f"\n{g.samples} sampled completions: distinct-1 {g.distinct_1:.3f}, distinct-2 {g.distinct_2:.3f}, "
            f"repeated 3-grams {g.repeated_3gram_rate:.3f}."
        )
    if result.probes is not None:
        p = result.probes
        lines.append(f"Flagged words: {p.flagged_words} of {p.words} ({p.samples_with_flagged} samples).")
        lines += [
            f"Bias pairs ({lang}, {gap.groups[0]}/{gap.groups[1]}, {gap.pairs}): mean gap {gap.mean_gap:+.3f} nats, "
            f"mean |gap| {gap.mean_abs_gap:.3f}, first preferred {gap.first_preferred:.0%}."
            for lang, gap in p.pair_gaps.items()
        ]
    lines.append("\n## Samples\n")
    lines += [f"**{s.mode}** `{s.prompt!r}` → {s.completion!r}\n" for s in result.samples]
    lines += ["\n## What it was fed\n", *bill_lines(result.fed)]
    return "\n".join(lines)


@task(cache_policy=NO_CACHE, task_run_name="torchrun-{cfg.launch.nproc_per_node}x{cfg.launch.nnodes}")
def launch_training(
    cfg: TrainConfig,
    timeout_s: float | None = None,
    run_name: str | None = None,
    evaluate_with: EvalConfig | None = None,
    stop_when: Callable[[int, float], bool] | None = None,
) -> list[str]:
    """Run training under torchrun (`TrainingSupervisor`); return the completed checkpoints.

    Worker lines go to this run's log, a progress artifact follows the steps, each new checkpoint is announced as
    `pretrain.checkpoint.saved` about `pretrain.run.<run_name>` (default: the output directory's name) and, with
    ``evaluate_with``, evaluated as it lands, so pruning keeps only `keep_last_checkpoints` on disk. The loss curve
    is published at the end, also when the run fails or is stopped by ``stop_when``.
    """
    logger = get_run_logger()
    name = run_name or cfg.output_url.rstrip("/").rsplit("/", 1)[-1]
    progress = create_progress_artifact(progress=0.0, description=f"{name}: starting under {cfg.output_url}")
    assert isinstance(progress, UUID)  # a sync call returns the id, not a coroutine

    def line(text: str) -> None:  # from the reader thread: the run logger carries its run ids with it
        logger.info("%s", text)
        announce_health(name, text)

    hooks = SupervisorHooks(
        line=line,
        announce=lambda step, url: announce_checkpoint(name, step, url),
        progress=lambda percent, text: update_progress_artifact(progress, percent, f"{name}: {text}"),
        evaluate=None if evaluate_with is None else partial(_evaluate_beside, cfg=cfg, evaluate_with=evaluate_with),
    )
    supervisor = TrainingSupervisor(cfg, name, hooks, logger, timeout_s=timeout_s, stop_when=stop_when)
    try:
        return supervisor.run()
    finally:
        publish_loss_curve(cfg.output_url, name, supervisor.monitor)


def _evaluate_beside(url: str, cfg: TrainConfig, evaluate_with: EvalConfig) -> EvalResult:
    return evaluate_checkpoint(url, cfg.data.tokens_url, cfg.data.tokenizer_url, evaluate_with)


def publish_loss_curve(output_url: str, name: str, monitor: TrainingMonitor) -> str | None:
    """Write `<output_url>/loss_curve.png` and show it as a markdown artifact; None when there is nothing to draw
    or no matplotlib."""
    if not monitor.train_losses and not monitor.validation_losses:
        return None
    if not plotting_available():
        get_run_logger().warning("no loss curve: it needs matplotlib (pip install 'pretrain[eval]')")
        return None
    png = render_loss_curve(monitor.train_losses, monitor.validation_losses, f"{name}: loss by step")
    url = loss_curve_url(output_url)
    storage.write_bytes(url, png)
    image = base64.b64encode(png).decode()
    create_markdown_artifact(
        key=artifact_key("loss-curve", name),
        markdown=f"# Loss curve of {name}\n\n{monitor.summary()}\n\n![loss](data:image/png;base64,{image})\n\n`{url}`",
        description=f"Training and validation loss of {name}",
    )
    return url


@task(cache_policy=NO_CACHE, task_run_name="evaluate-{checkpoint_url}")
def evaluate(checkpoint_url: str, tokens_url: str, tokenizer_url: str, cfg: EvalConfig) -> EvalResult:
    """Evaluate one checkpoint; show per-domain perplexities and bits per byte as a table, and the zero-shot
    tasks, samples and probes as markdown."""
    result = evaluate_checkpoint(checkpoint_url, tokens_url, tokenizer_url, cfg)
    rows = [
        {
            "split": split,
            "domain": domain,
            "perplexity": round(m.perplexity, 2),
            "bits_per_byte": None if m.bits_per_byte is None else round(m.bits_per_byte, 4),
            "bits_per_byte_stderr": None if m.bits_per_byte_stderr is None else round(m.bits_per_byte_stderr, 4),
            "tokens": m.tokens,
        }
        for split, res in result.splits.items()
        for domain, m in [("all", res.overall), *res.domains.items()]
        if m is not None
    ]
    create_table_artifact(
        key=f"eval-step-{result.step}", table=rows, description=f"Perplexity of {checkpoint_url} (step {result.step})"
    )
    create_markdown_artifact(key=f"samples-step-{result.step}", markdown=evaluation_markdown(result))
    return result
