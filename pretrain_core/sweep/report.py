"""A sweep's report: the best trial against the base settings, parameter importance, the optimisation history and
parallel-coordinate plots, every trial in a table, and under µP the best setting carried to a target width as a
config `pretrain train --config` takes."""

from __future__ import annotations

import importlib.util
import io
import warnings
from dataclasses import dataclass, field
from typing import Any

import optuna
import yaml
from optuna.trial import FrozenTrial, TrialState

from pretrain_core import storage
from pretrain_core.sweep.spec import BETAS, Choice, SweepSpec

PLOTS = ("optimization_history", "parallel_coordinate", "param_importances")
# fANOVA's importances from fewer complete trials than this rank settings by chance more often than not: shown with
# a warning below it (Optuna computes them from any two)
MIN_TRIALS_FOR_IMPORTANCE = 10


@dataclass
class SweepReport:
    best_value: float | None
    best_params: dict[str, Choice]
    base_value: float | None  # the base settings' own trial (include_base), for comparison
    importances: dict[str, float]
    trials: list[dict[str, Any]]
    markdown: str = ""
    report_url: str = ""
    plot_urls: list[str] = field(default_factory=list)
    transferred_url: str | None = None
    best_set_line: str = ""  # `pretrain train` overrides that train with the best settings
    complete_trials: int = 0


def _row(trial: FrozenTrial) -> dict[str, Any]:
    start, end = trial.datetime_start, trial.datetime_complete
    seconds = (end - start).total_seconds() if start and end else None
    last = max(trial.intermediate_values, default=None)
    return {
        "trial": trial.number, "state": trial.state.name.lower(), "value": trial.value,
        "last_step": last, "seconds": round(seconds, 1) if seconds is not None else None, **trial.params,
    }  # fmt: skip


def _plots(study: optuna.Study, root: str, importances: dict[str, float]) -> list[str]:
    """PNG files of Optuna's matplotlib plots (none without matplotlib or with fewer than two complete trials)."""
    if importlib.util.find_spec("matplotlib") is None or len(study.get_trials(states=(TrialState.COMPLETE,))) < 2:
        return []
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from optuna.visualization import matplotlib as optuna_plots

    urls = []
    for name in PLOTS:
        if name == "param_importances" and not importances:
            continue
        with warnings.catch_warnings():  # Optuna marks its matplotlib plots experimental
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            axes = getattr(optuna_plots, f"plot_{name}")(study)
        figure = axes.figure if hasattr(axes, "figure") else axes.flat[0].figure
        buffer = io.BytesIO()
        figure.set_size_inches(9, 5)
        figure.savefig(buffer, format="png", dpi=80, bbox_inches="tight", metadata={"Software": None})
        plt.close(figure)
        url = storage.join(root, f"{name}.png")
        storage.write_bytes(url, buffer.getvalue())
        urls.append(url)
    return urls


def transferred_config(spec: SweepSpec, params: dict[str, Choice]) -> dict[str, Any]:
    """The sweep's pipeline config with the best setting, on the `transfer_to` model under µP, with the proxy's
    width as the base width: what muTransfer says holds at the new width."""
    assert spec.transfer_to is not None
    config = spec.pipeline_config().model_dump(mode="json")
    train = config["train"]
    proxy = spec.base_train()
    target = spec.transfer_to
    train.update({name: value for name, value in params.items() if name not in BETAS})
    train["betas"] = [float(params.get(name, proxy.optimizer.betas[i])) for i, name in enumerate(BETAS)]
    train.update(
        model=None, n_layer=target.n_layer or proxy.model.shape()[0], n_head=target.n_head, d_model=target.d_model,
        parametrization="mup", mup_base_width=proxy.model.shape()[2],
    )  # fmt: skip
    return config


def write_report(spec: SweepSpec, study: optuna.Study) -> SweepReport:
    """Write the report (markdown, trials JSON, plots, transferred config) under `<root>/report/`."""
    root = storage.join(spec.root, "report")
    trials = [t for t in study.get_trials(deepcopy=False) if t.state != TrialState.WAITING]  # queued, not started
    complete = [t for t in trials if t.state == TrialState.COMPLETE]
    best = min(complete, key=lambda t: t.value if t.value is not None else float("inf"), default=None)
    base_values = spec.base_values()
    base = next((t for t in complete if t.params == base_values), None)
    try:
        importances = dict(optuna.importance.get_param_importances(study)) if len(complete) >= 2 else {}
    except (RuntimeError, ValueError):  # every complete trial has the same value or settings
        importances = {}
    report = SweepReport(
        best_value=best.value if best else None, best_params=dict(best.params) if best else {},
        base_value=base.value if base else None, importances=importances, trials=[_row(t) for t in trials],
        best_set_line=spec.set_line(dict(best.params)) if best else "", complete_trials=len(complete),
    )  # fmt: skip
    report.plot_urls = _plots(study, root, importances)
    if spec.transfer_to is not None and best is not None:
        report.transferred_url = storage.join(root, "transferred.yaml")
        text = yaml.safe_dump(transferred_config(spec, report.best_params), sort_keys=False, allow_unicode=True)
        header = f"# pretrain train --config {report.transferred_url}: sweep {spec.name}'s best, carried under µP\n"
        storage.write_bytes(report.transferred_url, (header + text).encode())
    report.markdown = _markdown(spec, report)
    report.report_url = storage.join(root, "report.md")
    storage.write_bytes(report.report_url, report.markdown.encode())
    storage.write_json(storage.join(root, "trials.json"), report.trials)
    return report


def _markdown(spec: SweepSpec, report: SweepReport) -> str:
    states: dict[str, int] = {}
    for row in report.trials:
        states[row["state"]] = states.get(row["state"], 0) + 1
    lines = [f"# Sweep {spec.name}", "", "Trials: " + ", ".join(f"{n} {s}" for s, n in sorted(states.items())), ""]
    if report.best_value is not None:
        best = ", ".join(
            f"`{name}={value:.4g}`" if isinstance(value, float) else f"`{name}={value}`"
            for name, value in report.best_params.items()
        )
        line = f"Best validation loss **{report.best_value:.4f}** with {best}"
        if report.base_value is not None:
            line += (
                f"; the base settings reached {report.base_value:.4f} ({report.best_value - report.base_value:+.4f})"
            )
        lines += [line + ".", "", "Train with it:", "", f"    pretrain train {report.best_set_line}"]
    if report.importances:
        lines.append("")
        if report.complete_trials < MIN_TRIALS_FOR_IMPORTANCE:
            lines.append(
                f"Importance from {report.complete_trials} complete trials: fewer than {MIN_TRIALS_FOR_IMPORTANCE}, "
                "so the ranking below is mostly chance; run more trials before reading it."
            )
        lines += ["", "| setting | importance |", "|---|---|"]
        lines += [f"| {name} | {value:.2f} |" for name, value in report.importances.items()]
    lines += [
        "",
        "| trial | state | validation loss (pruned: when stopped) | last step | seconds | "
        + " | ".join(spec.space)
        + " |",
    ]
    lines.append("|" + "---|" * (5 + len(spec.space)))
    for row in report.trials:
        value = f"{row['value']:.4f}" if row["value"] is not None else ""
        cells = [str(row["trial"]), row["state"], value, str(row["last_step"] or ""), str(row["seconds"] or "")]
        cells += [
            f"{row[name]:.4g}" if isinstance(row.get(name), float) else str(row.get(name, "")) for name in spec.space
        ]
        lines.append("| " + " | ".join(cells) + " |")
    if report.transferred_url:
        lines += ["", f"Transferred under µP to width {spec.transfer_to.d_model if spec.transfer_to else ''}: "
                  f"`pretrain train --config {report.transferred_url}`"]  # fmt: skip
    return "\n".join(lines) + "\n"
