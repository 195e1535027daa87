"""Sweeps: the search space, the study's resumption and pruning (real Optuna on SQLite), the report and the µP
transfer config."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import optuna
import pytest
import yaml
from optuna.distributions import FloatDistribution
from optuna.trial import TrialState, create_trial
from pydantic import ValidationError

from pretrain_core import storage
from pretrain_core.config import ConfigError, load_config
from pretrain_core.pipeline import CorpusPipeline
from pretrain_core.stage import finalize_stage
from pretrain_core.sweep.report import write_report
from pretrain_core.sweep.spec import CPU_PRESET, SweepSpec, load_sweep
from pretrain_core.sweep.study import PruneOnValidation, ask, finished_trials, open_study

SPACE = {"lr": {"kind": "float", "low": 1e-4, "high": 1e-2, "log": True}, "beta2": {"kind": "categorical",
         "choices": [0.95, 0.99, 0.999]}}  # fmt: skip


def _spec(tmp_path: Path, **values: Any) -> SweepSpec:
    """A sweep over the demo config whose own build root is an empty scratch folder (never a local demo build)."""
    values["base_overrides"] = [f"storage.root={tmp_path / 'base'}", *values.get("base_overrides", [])]
    return SweepSpec.model_validate({"output_root": str(tmp_path), "space": SPACE, "token_budget": 20_000, **values})


def test_the_shipped_preset_loads_and_its_trials_are_valid_runs() -> None:
    spec = load_sweep(CPU_PRESET)
    base = spec.base_values()
    assert base["lr"] == spec.base_train().optimizer.lr and set(base) == set(spec.space)
    trial = spec.train_config(base)
    assert trial.max_steps * trial.tokens_per_step >= spec.token_budget  # type: ignore[operator]
    assert trial.monitor.eval_every == trial.max_steps // spec.evaluations and trial.output_url.startswith(spec.root)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"space": {"n_layer": {"kind": "int", "low": 1, "high": 4}}}, r"cannot search \['n_layer'\]"),
        ({"space": {"lr": {"kind": "float", "low": 0.1, "high": 0.01}}}, "needs low < high"),
        ({"space": {"beta2": {"kind": "categorical"}}}, "needs choices"),
        ({"transfer_to": {"d_model": 512, "n_head": 8}}, "proxy trained with train.model.parametrization=mup"),
        ({"space": {"lr": {"kind": "float", "low": 0.01, "high": 0.1}}}, "the base settings lr=0.003 lie outside"),
    ],
)
def test_a_bad_sweep_is_refused_naming_the_problem(tmp_path: Path, values: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        _spec(tmp_path, **values)


def test_trial_settings_reach_the_run_and_name_its_folder(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    first = spec.train_config({"lr": 0.002, "beta2": 0.95})
    assert first.optimizer.lr == 0.002 and first.optimizer.betas == (0.9, 0.95)
    assert first.output_url == spec.train_config({"beta2": 0.95, "lr": 0.002}).output_url  # same settings, same run
    assert first.output_url != spec.train_config({"lr": 0.003, "beta2": 0.95}).output_url


def test_a_rerun_continues_the_study_and_asks_again_what_a_killed_sweep_left_running(tmp_path: Path) -> None:
    spec = _spec(tmp_path, trials=3)
    study = open_study(spec)
    base = ask(study, spec)
    assert base.params == spec.base_values()  # the base settings go first: the number to beat
    study.tell(base, 3.0)
    interrupted = ask(study, spec)  # the sweep dies while this trial trains
    again = open_study(spec)
    assert (tmp_path / "sweep" / "study.db").exists() and finished_trials(again) == 1
    assert again.trials[interrupted.number].state == TrialState.FAIL
    resumed = ask(again, spec)
    assert resumed.params == interrupted.params and resumed.number > interrupted.number


def test_a_trial_trailing_the_median_is_pruned_at_a_validation_step(tmp_path: Path) -> None:
    spec = _spec(tmp_path, include_base=False)
    study = open_study(spec)
    for value in (2.0, 2.1, 2.2, 2.3):
        trial = ask(study, spec)
        for step in (0, 5, 10):
            trial.report(value + 1 - step / 10, step)
        study.tell(trial, value)
    good, bad = PruneOnValidation(ask(study, spec)), PruneOnValidation(ask(study, spec))
    assert not good(0, 9.0)  # step 0 (the untrained model) is never judged
    assert not good(5, 2.0) and good.pruned_at is None
    assert bad(5, 4.0) and bad.pruned_at == 5


def test_the_report_names_the_best_trial_against_the_base_and_draws_the_plots(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    study = open_study(spec)
    lr = FloatDistribution(1e-4, 1e-2, log=True)
    beta2 = optuna.distributions.CategoricalDistribution([0.95, 0.99, 0.999])
    for number, (value, params) in enumerate([(3.0, spec.base_values()), (2.5, {"lr": 0.004, "beta2": 0.95}),
                                               (2.8, {"lr": 0.0005, "beta2": 0.99})]):  # fmt: skip
        study.add_trial(create_trial(value=value, params=params, distributions={"lr": lr, "beta2": beta2},
                                     intermediate_values={10 * number: value}))  # fmt: skip
    report = write_report(spec, study)
    assert report.best_value == 2.5 and report.best_params == {"lr": 0.004, "beta2": 0.95}
    assert report.base_value == 3.0 and "the base settings reached 3.0000 (-0.5000)" in report.markdown
    assert [url.rsplit("/", 1)[-1] for url in report.plot_urls][:2] == [
        "optimization_history.png",
        "parallel_coordinate.png",
    ]
    assert all(storage.read_bytes(url).startswith(b"\x89PNG") for url in report.plot_urls)
    assert len(storage.read_json(storage.join(spec.root, "report", "trials.json"))) == 3
    # a line that trains with the best settings, as `pretrain train` reads it
    assert f"    pretrain train {report.best_set_line}" in report.markdown
    words = [word for word in report.best_set_line.split() if word != "--set"]
    train = load_config(None, words).train
    assert train.optimizer.lr == 0.004 and train.optimizer.betas == (0.9, 0.95)
    # importance from 3 trials is flagged as chance
    assert "Importance from 3 complete trials: fewer than 10" in report.markdown


def test_a_bad_search_space_is_named_as_the_sweep_file(tmp_path: Path) -> None:
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump({"space": {"lr": {"kind": "float", "low": "x", "high": 0.1}}}), encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"invalid sweep file {path}:\n  space\.lr\.low: "):
        load_sweep(path)


def test_under_mup_the_best_setting_is_carried_to_the_target_width_as_a_train_config(tmp_path: Path) -> None:
    spec = _spec(tmp_path, base_overrides=["train.parametrization=mup", "train.model=tiny"],
                 transfer_to={"d_model": 512, "n_head": 8})  # fmt: skip
    study = open_study(spec)
    lr = FloatDistribution(1e-4, 1e-2, log=True)
    beta2 = optuna.distributions.CategoricalDistribution([0.95, 0.99, 0.999])
    study.add_trial(
        create_trial(value=2.0, params={"lr": 0.006, "beta2": 0.95}, distributions={"lr": lr, "beta2": beta2})
    )
    report = write_report(spec, study)
    assert report.transferred_url is not None
    text = storage.read_bytes(report.transferred_url).decode()
    assert text.startswith("# pretrain train --config")
    train = load_config(report.transferred_url).train
    assert (train.model.d_model, train.model.n_head, train.model.parametrization, train.model.mup_base_width) == (
        512,
        8,
        "mup",
        128,
    )
    assert train.optimizer.lr == 0.006 and train.optimizer.betas == (0.9, 0.95) and train.model.shape()[0] == 4
    assert yaml.safe_load(text)["train"]["model"] is None


def test_a_base_build_finished_under_the_same_settings_is_trained_on_instead_of_a_new_one(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    assert spec.pipeline_config().storage.root == str(tmp_path)  # nothing built at the base root: the sweep's own
    base = load_config(None, spec.base_overrides)
    pipeline = CorpusPipeline(base)
    # the tokenize stage's completion record, as a finished build leaves it (no shards needed to decide)
    finalize_stage("tokenize", pipeline.root("tokenize"), pipeline.config_hash("tokenize"), {}, [], 0.0)
    reused = spec.pipeline_config()
    assert reused.storage.root == str(tmp_path / "base") and reused.storage.layout == "flat"
    assert spec.base_train().data.tokens_url == pipeline.root("tokenize")
