"""Tasks of the sweep flow: the report and its Prefect artifacts."""

from __future__ import annotations

import base64
import re

import optuna
from prefect import task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE

from pretrain_core import storage
from pretrain_core.sweep.report import SweepReport, write_report
from pretrain_core.sweep.spec import SweepSpec


def _key(name: str) -> str:
    """An artifact key (lowercase letters, digits, dashes) from a sweep's name."""
    return re.sub(r"[^a-z0-9-]+", "-", name.lower())


@task(cache_policy=NO_CACHE)
def report_sweep(spec: SweepSpec, study: optuna.Study) -> SweepReport:
    """Write the report under `<root>/report/`; publish it (plots inline) and the trials table as artifacts."""
    report = write_report(spec, study)
    images = [
        f"![{url.rsplit('/', 1)[-1]}](data:image/png;base64,{base64.b64encode(storage.read_bytes(url)).decode()})"
        for url in report.plot_urls
    ]
    markdown = "\n\n".join([report.markdown, *images])
    create_markdown_artifact(key=f"sweep-{_key(spec.name)}", markdown=markdown, description=report.report_url)
    create_table_artifact(key=f"sweep-{_key(spec.name)}-trials", table=report.trials, description="every trial")
    return report
