"""sweep: build the corpus once, then ask an Optuna study for settings, train a proxy run on each (pruned on its
validation loss as it trains), tell the study the result, and report."""

from __future__ import annotations

from optuna.trial import TrialState
from prefect import flow, get_run_logger

from flows.corpus_rebuild import run_corpus
from pretrain_core.sweep.report import SweepReport
from pretrain_core.sweep.spec import CPU_PRESET, SweepSpec, load_sweep
from pretrain_core.sweep.study import PruneOnValidation, ask, finished_trials, open_study, trial_result
from tasks.slots import hold_slot
from tasks.sweep import report_sweep
from tasks.training import launch_training


@flow(name="sweep", log_prints=True)
def sweep(
    spec: SweepSpec | None = None, concurrency_limit: str | None = None, strict_concurrency: bool = False
) -> SweepReport:
    """Run a sweep; a rerun continues the study, never repeating a finished trial.

    Args:
        spec: the corpus and proxy model, the search space, trials, pruning and the µP transfer target; empty: the
            CPU preset (learning rate, warmup, weight decay and beta2 of the demo's tiny model).
        concurrency_limit: a Prefect global concurrency limit (e.g. `pretrain-gpu`) each trial holds a slot of
            while it trains, so trials queue with training runs for the accelerators; unset: no throttling.
        strict_concurrency: fail when that limit does not exist, instead of training unthrottled with a warning.
    """
    spec = spec or load_sweep(CPU_PRESET)
    logger = get_run_logger()
    run_corpus(spec.pipeline_config())
    study = open_study(spec)
    while finished_trials(study) < spec.trials:
        trial = ask(study, spec)
        try:
            cfg = spec.train_config(dict(trial.params))
        except ValueError as error:  # a combination the trainer refuses (e.g. warmup past the run)
            logger.warning("trial %d: settings refused: %s", trial.number, str(error).splitlines()[0])
            study.tell(trial, state=TrialState.FAIL)
            continue
        pruning = PruneOnValidation(trial)
        try:
            with hold_slot(concurrency_limit, strict_concurrency):
                launch_training(cfg, run_name=f"{spec.name}-trial-{trial.number}", stop_when=pruning)
        except RuntimeError as error:
            logger.warning("trial %d failed: %s", trial.number, error)
            study.tell(trial, state=TrialState.FAIL)
            continue
        if pruning.pruned_at is not None:
            logger.info("trial %d pruned at step %d", trial.number, pruning.pruned_at)
            study.tell(trial, state=TrialState.PRUNED)
            continue
        value = trial_result(cfg.output_url)["final_validation_loss"]
        logger.info("trial %d: validation loss %.4f with %s", trial.number, value, trial.params)
        study.tell(trial, value)
    report = report_sweep(spec, study)
    print(report.markdown)
    return report
