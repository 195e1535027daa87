"""The Optuna study behind a sweep: where it lives, how trials are asked for, pruned and told.

The study is kept in SQLite under the sweep's root (or any database Optuna's RDB storage takes), so a rerun continues
it: finished trials (complete or pruned) count towards `trials` and are not run again. A trial left running by a
killed sweep is marked failed and asked again with the same settings, so its run resumes from its last checkpoint.
One sweep process per study at a time (the deployment's concurrency limit): another's running trials would look
interrupted.
"""

from __future__ import annotations

import logging
from typing import Any

import optuna
from optuna.distributions import BaseDistribution, CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.trial import Trial, TrialState

from pretrain_core import storage
from pretrain_core.sweep.spec import Choice, SweepSpec

log = logging.getLogger(__name__)
FINISHED = (TrialState.COMPLETE, TrialState.PRUNED)
STUDY_FILE = "study.db"


def study_storage(spec: SweepSpec) -> str:
    """The study's database URL: the spec's, or a SQLite file under the sweep's root (which must be local)."""
    if spec.study_url:
        return spec.study_url
    fs, path = storage.filesystem(spec.root)
    if "file" not in (fs.protocol if isinstance(fs.protocol, tuple) else (fs.protocol,)):
        raise ValueError(f"output_root {spec.output_root} is not local: give study_url (a database URL) for the study")
    fs.makedirs(path, exist_ok=True)
    return f"sqlite:///{path}/{STUDY_FILE}"


def distributions(spec: SweepSpec) -> dict[str, BaseDistribution]:
    found: dict[str, BaseDistribution] = {}
    for name, param in spec.space.items():
        if param.kind == "categorical":
            assert param.choices is not None
            found[name] = CategoricalDistribution(param.choices)
        elif param.kind == "int":
            assert param.low is not None and param.high is not None
            found[name] = IntDistribution(int(param.low), int(param.high), log=param.log)
        else:
            assert param.low is not None and param.high is not None
            found[name] = FloatDistribution(param.low, param.high, log=param.log)
    return found


def _pruner(spec: SweepSpec) -> optuna.pruners.BasePruner:
    if spec.pruner == "median":  # not on the step-0 loss (the untrained model's), not before 4 trials finished
        return optuna.pruners.MedianPruner(n_startup_trials=4, n_warmup_steps=1)
    if spec.pruner == "hyperband":
        return optuna.pruners.HyperbandPruner(min_resource=1)
    return optuna.pruners.NopPruner()


def open_study(spec: SweepSpec) -> optuna.Study:
    """Create or continue the study; requeue trials a killed sweep left running; queue the base settings first."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(
        study_name=spec.name, storage=study_storage(spec), load_if_exists=True, direction="minimize",
        sampler=optuna.samplers.TPESampler(seed=spec.seed), pruner=_pruner(spec),
    )  # fmt: skip
    for trial in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        log.warning("trial %d was left running by an interrupted sweep: asked again", trial.number)
        study.tell(trial.number, state=TrialState.FAIL)
        study.enqueue_trial(trial.params)
    if spec.include_base and not study.trials:
        study.enqueue_trial(spec.base_values())
    return study


def finished_trials(study: optuna.Study) -> int:
    return len(study.get_trials(deepcopy=False, states=FINISHED))


def ask(study: optuna.Study, spec: SweepSpec) -> Trial:
    return study.ask(distributions(spec))


def trial_params(trial: Trial) -> dict[str, Choice]:
    return dict(trial.params)


class PruneOnValidation:
    """Feeds a trial's validation losses to the pruner as training logs them; True means stop the run now."""

    def __init__(self, trial: Trial) -> None:
        self.trial = trial
        self.pruned_at: int | None = None

    def __call__(self, step: int, validation_loss: float) -> bool:
        self.trial.report(validation_loss, step)
        if self.pruned_at is None and self.trial.should_prune():
            self.pruned_at = step
        return self.pruned_at is not None


def trial_result(output_url: str) -> dict[str, Any]:
    """What the trial's run wrote at its end (`train_summary.json`)."""
    summary: dict[str, Any] = storage.read_json(storage.join(output_url, "train_summary.json"))
    return summary
