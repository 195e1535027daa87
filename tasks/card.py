"""The data card at the end of every corpus build: files under the root and a Markdown artifact in the UI."""

from __future__ import annotations

from prefect import get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE

from pretrain_core.card.collect import collect_card
from pretrain_core.card.render import render_markdown, write_card
from pretrain_core.config import PipelineConfig
from tasks.progress import artifact_key


@task(cache_policy=NO_CACHE, task_run_name="data-card")
def write_data_card(cfg: PipelineConfig) -> dict[str, str]:
    """Write the build's card (card.md, card.html, card.json, figures) and show its text in the UI (the figures
    are in card.html, which opens anywhere)."""
    card = collect_card(cfg)
    urls = write_card(card)
    create_markdown_artifact(
        key=artifact_key(cfg.name, "data-card"),
        markdown=render_markdown(card, {}),
        description=f"Data card of the build under {cfg.storage.root}; with figures: {urls['html']}",
    )
    get_run_logger().info("data card: %s (figures in %s)", urls["md"], urls["html"])
    return urls
