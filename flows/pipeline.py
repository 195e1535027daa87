"""pretrain-pipeline: the whole DAG, corpus stages then training and checkpoint evaluation."""

from __future__ import annotations

from prefect import flow

from flows.corpus_rebuild import run_corpus
from flows.train import train_and_evaluate
from pretrain_core.config import PipelineConfig, load_config
from pretrain_core.report import RunReport, run_report


@flow(name="pretrain-pipeline", log_prints=True)
def pretrain_pipeline(config_path: str | None = None, overrides: list[str] | None = None) -> RunReport:
    """Raw sources to an evaluated checkpoint.

    Args:
        config_path: pipeline YAML; the embedded demo config when empty.
        overrides: dotted overrides such as `storage.root=s3://bucket/run`.
    """
    return run_pipeline(load_config(config_path, overrides))


def run_pipeline(cfg: PipelineConfig) -> RunReport:
    manifests = run_corpus(cfg)
    evaluations = train_and_evaluate(cfg)
    report = run_report(cfg, manifests, evaluations)
    print(report.render())
    return report
