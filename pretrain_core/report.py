"""The end-of-run report: what each stage kept and dropped, how training went, where everything is."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from pretrain_core import storage
from pretrain_core.config import PipelineConfig
from pretrain_core.evaluate.evaluator import EvalResult
from pretrain_core.manifest import StageManifest
from pretrain_core.pipeline import training_config


class RunReport(BaseModel):
    root: str
    stages: dict[str, dict[str, Any]]
    train: dict[str, Any]
    evaluations: list[dict[str, Any]]

    def render(self) -> str:
        lines = [f"Results under {self.root}", "", f"{'stage':<10} {'in':>7} {'out':>7}  dropped (by reason)"]
        for name, s in self.stages.items():
            dropped = ", ".join(f"{k}={v}" for k, v in s["dropped"].items()) or "-"
            lines.append(f"{name:<10} {s['docs_in']:>7} {s['docs_out']:>7}  {dropped}")
        t = self.train
        if t:
            lines += [
                "",
                f"training: {t.get('steps')} steps, {t.get('num_params')} parameters, "
                f"{t.get('tokens_per_second') or 0:.0f} tokens/s",
                f"validation perplexity at step 0: {t.get('initial_validation_perplexity') or float('nan'):.1f}",
                f"validation perplexity at the end: {t.get('final_validation_perplexity') or float('nan'):.1f}",
            ]
        for ev in self.evaluations:
            per_domain = ", ".join(f"{d}={p:.1f}" for d, p in ev["validation"].items())
            lines.append(f"checkpoint step {ev['step']}: validation perplexity {per_domain} ({ev['checkpoint']})")
        return "\n".join(lines)


def run_report(cfg: PipelineConfig, manifests: dict[str, StageManifest], evaluations: list[EvalResult]) -> RunReport:
    summary_url = storage.join(training_config(cfg).output_url, "train_summary.json")
    train = storage.read_json(summary_url) if storage.exists(summary_url) else {}
    evals = []
    for ev in evaluations:
        validation = ev.splits["validation"]
        per_domain = {"all": validation.overall} | dict(validation.domains)
        evals.append(
            {
                "step": ev.step,
                "checkpoint": ev.checkpoint_url,
                "validation": {d: m.perplexity for d, m in per_domain.items() if m is not None},
            }
        )
    return RunReport(
        root=cfg.storage.root,
        stages={
            name: {"docs_in": m.docs_in, "docs_out": m.docs_out, "dropped": m.dropped} for name, m in manifests.items()
        },
        train=train,
        evaluations=evals,
    )
