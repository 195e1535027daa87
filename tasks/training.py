"""Tasks for training and evaluation: launch torchrun and announce its checkpoints as they land, evaluate one.

Training runs in a supervisor thread while the task's own thread watches for checkpoints. Prefect delivers a
cancellation to the flow process as SIGTERM, raised as an exception in this (the main) thread; Prefect never
reaches torchrun's process tree (its own session), so the watcher sets the supervisor's cancel event and waits
until the tree is gone before letting the exception through.
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
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
from pretrain_core.train.checkpoint import announced_steps, completed_checkpoints, mark_announced
from pretrain_core.train.config import EvalConfig, TrainConfig
from pretrain_core.train.health import parse_health_event
from pretrain_core.train.launch import run_torchrun, torchrun_command, write_config
from pretrain_core.train.loss_plot import loss_curve_url, render_loss_curve
from pretrain_core.train.monitor import TrainingMonitor
from pretrain_core.train.planner import GIB, check_fits
from pretrain_core.train.tokenizer import load_tokenizer
from pretrain_core.train.trainer import completed_run
from tasks.progress import artifact_key

CHECKPOINT_SAVED = "pretrain.checkpoint.saved"
# Workers get this long to checkpoint and exit after SIGTERM; under Prefect's 30 s before its runner SIGKILLs us.
TERMINATE_GRACE_S = 20.0


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
    one (`pretrain_core.train.health`), so an automation can act on it; False for any other line."""
    event = parse_health_event(line)
    if event is None:
        return False
    payload = {"step": event.step, **event.values}
    return emit_event(f"pretrain.training.{event.kind}", resource=run_resource(run_name), payload=payload) is not None


def announce_unannounced(run_name: str, output_url: str, announced: set[int]) -> list[str]:
    """Announce every complete checkpoint not in ``announced`` (which it extends), oldest first, and record each
    delivered one durably; return their urls. An undelivered event is tried again by the run's next attempt."""
    fresh = [(step, url) for step, url in completed_checkpoints(output_url) if step not in announced]
    for step, url in fresh:
        announced.add(step)
        if announce_checkpoint(run_name, step, url):
            mark_announced(output_url, step)
    return [url for _, url in fresh]


def _await_termination(supervisor: Future[int]) -> None:
    """Wait for the supervisor to finish tearing the tree down, even through repeated signals."""
    while not supervisor.done():
        try:
            wait([supervisor])
        except BaseException:  # a second SIGTERM or Ctrl-C must not abandon the tree half-terminated
            continue


def evaluation_markdown(result: EvalResult) -> str:
    """What an engineer reads in the UI after a checkpoint: zero-shot tasks, sample figures, probes, samples."""
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
    return "\n".join(lines)


@task(cache_policy=NO_CACHE, task_run_name="torchrun-{cfg.nproc_per_node}x{cfg.nnodes}")
def launch_training(
    cfg: TrainConfig,
    timeout_s: float | None = None,
    run_name: str | None = None,
    poll_s: float = 2.0,
    evaluate_with: EvalConfig | None = None,
    stop_when: Callable[[int, float], bool] | None = None,
) -> list[str]:
    """Run training under torchrun (it resumes from the newest checkpoint); return the completed checkpoints.

    Every line the workers print goes to this run's log (the Prefect UI and the console). A progress artifact
    follows the steps (loss, tokens/s, time left); every newly completed checkpoint is announced as a
    `pretrain.checkpoint.saved` event about `pretrain.run.<run_name>` (default: the output directory's name) and,
    with ``evaluate_with``, evaluated here as it lands, one at a time beside training, so pruning (which waits for
    evaluations) keeps only `keep_last_checkpoints` on disk instead of every checkpoint until the end. At the end
    the loss curve is published. A failed run raises with the first failing worker's exception. ``stop_when(step,
    validation_loss)`` sees every validation loss as it is logged; when it answers True the run is stopped as on
    SIGTERM (the workers save and exit), which is how a sweep prunes a trial.
    """
    logger = get_run_logger()
    name = run_name or cfg.output_url.rstrip("/").rsplit("/", 1)[-1]
    announced = announced_steps(cfg.output_url)  # what earlier attempts delivered: the rest is announced below
    if (done := completed_run(cfg)) is not None:
        logger.info("%s already trained to step %d under this config: nothing to do", name, done["steps"])
        announce_unannounced(name, cfg.output_url, announced)  # an attempt killed after its last save
        return [url for _, url in completed_checkpoints(cfg.output_url)]
    if cfg.gpu_memory_gib is not None:  # refused here, before any process starts, when it cannot fit
        tokenizer, _ = load_tokenizer(cfg.tokenizer_url)
        estimate = check_fits(cfg, tokenizer.get_piece_size() + (cfg.objective == "masked"))
        logger.info("estimated peak %.1f GiB per GPU (of %g): fits", estimate.peak / GIB, cfg.gpu_memory_gib)
    env = {"OMP_NUM_THREADS": str(cfg.num_threads), "OMP_WAIT_POLICY": "PASSIVE"}
    command = torchrun_command(cfg, write_config(cfg))
    monitor = TrainingMonitor(cfg.max_steps)
    progress = create_progress_artifact(
        progress=100 * max(announced, default=0) / cfg.max_steps,
        description=f"{name}: starting under {cfg.output_url}",
    )
    assert isinstance(progress, UUID)  # a sync call returns the id, not a coroutine

    cancel = threading.Event()

    def on_line(line: str) -> None:  # the reader thread's: the run logger carries its run ids with it
        point = monitor.feed(line)
        logger.info("%s", line)
        announce_health(name, line)
        if stop_when is None or point is None or "val_loss" not in point.values or cancel.is_set():
            return
        if stop_when(point.step, point.values["val_loss"]):
            logger.info("stopping %s at step %d: its caller asked to", name, point.step)
            cancel.set()

    shown = ""
    evaluator = ThreadPoolExecutor(max_workers=1, thread_name_prefix="evaluate")
    evaluations: list[Future[EvalResult]] = []

    def announce_new() -> None:
        for url in announce_unannounced(name, cfg.output_url, announced):
            if evaluate_with is not None:
                evaluations.append(
                    evaluator.submit(evaluate_checkpoint, url, cfg.tokens_url, cfg.tokenizer_url, evaluate_with)
                )

    with evaluator, ThreadPoolExecutor(max_workers=1, thread_name_prefix="torchrun") as pool:
        supervisor = pool.submit(run_torchrun, command, env, timeout_s, cancel, TERMINATE_GRACE_S, "torchrun", on_line)
        try:
            while True:
                wait([supervisor], timeout=poll_s)
                finished = supervisor.done()  # read before the last look, so no checkpoint is missed
                announce_new()
                if (summary := monitor.summary()) != shown:
                    shown = summary
                    update_progress_artifact(progress, 100 * monitor.step / cfg.max_steps, f"{name}: {summary}")
                if finished:
                    break
        except BaseException:
            logger.warning("training of %s interrupted: terminating torchrun's process tree", name)
            cancel.set()
            _await_termination(supervisor)
            announce_new()  # the checkpoint the workers saved on SIGTERM is evaluated like any other
            evaluator.shutdown(wait=False, cancel_futures=True)
            raise
        code = supervisor.result()
        for evaluation in evaluations:  # a failure is recorded beside the checkpoint; the flow's evaluation reports it
            if (error := evaluation.exception()) is not None:
                logger.warning("evaluation during training failed: %s: %s", type(error).__name__, error)
    publish_loss_curve(cfg.output_url, name, monitor)
    if code != 0 and stop_when is not None and cancel.is_set():  # stopped as asked: torchrun reports the SIGTERM
        logger.info("%s stopped at step %d as asked (torchrun exit code %d)", name, monitor.step, code)
    elif code != 0:
        logger.error("torchrun exited with code %d; the workers' first error: %s", code, monitor.failure())
        raise RuntimeError(f"training {name} failed (torchrun exit code {code}): {monitor.failure()}")
    checkpoints = [url for _, url in completed_checkpoints(cfg.output_url)]
    logger.info("training finished: %d checkpoints under %s", len(checkpoints), cfg.output_url)
    return checkpoints


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
