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
    """Two validation perplexities appear, measured on different samples of the validation split: training's own
    check on `train_sample_sequences` evenly spaced sequences (the split's own domain mix), and each checkpoint
    evaluation's on up to `evaluation_sequences` drawn in equal shares per domain and source (so the less
    familiar domains weigh more in its `all`, and the two figures differ)."""

    root: str
    stages: dict[str, dict[str, Any]]
    train: dict[str, Any]
    train_sample_sequences: int
    evaluations: list[dict[str, Any]]
    evaluation_sequences: int

    def render(self) -> str:
        lines = [f"Results under {self.root}", "", f"{'stage':<13} {'in':>7} {'out':>7}  dropped (by reason)"]
        for name, s in self.stages.items():
            dropped = ", ".join(f"{k}={v}" for k, v in s["dropped"].items()) or "-"
            lines.append(f"{name:<13} {s['docs_in']:>7} {s['docs_out']:>7}  {dropped}")
        t = self.train
        if t:
            lines += [
                "",
                f"training: {t.get('steps')} steps, {t.get('num_params')} parameters, "
                f"{t.get('tokens_per_second') or 0:.0f} tokens/s",
                f"validation perplexity in training ({self.train_sample_sequences} evenly spaced validation sequences, "
                "the split's domain mix):",
                f"  at step 0: {t.get('initial_validation_perplexity') or float('nan'):.1f}",
                f"  at the end: {t.get('final_validation_perplexity') or float('nan'):.1f}",
            ]
        if self.evaluations:
            lines.append(
                f"checkpoint evaluation (up to {self.evaluation_sequences} validation sequences, equal shares per "
                "domain and source):"
            )
        for ev in self.evaluations:
            per_domain = ", ".join(f"{d}={p:.1f}" for d, p in ev["validation"].items())
            lines.append(f"  step {ev['step']}: validation perplexity {per_domain} ({ev['checkpoint']})")
        return "\n".join(lines)


def run_report(cfg: PipelineConfig, manifests: dict[str, StageManifest], evaluations: list[EvalResult]) -> RunReport:
    train_cfg = training_config(cfg)
    summary_url = storage.join(train_cfg.output_url, "train_summary.json")
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
        train_sample_sequences=train_cfg.monitor.eval_batches
        * train_cfg.data.micro_batch_size
        * train_cfg.data_parallel_size,
        evaluations=evals,
        evaluation_sequences=cfg.evaluate.batches_per_split * cfg.evaluate.batch_size,
    )
