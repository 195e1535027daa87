"""Main text of an HTML page with trafilatura, which drops navigation, footers and other boilerplate.

When it finds no main content (index pages, odd markup) the page's visible text can be kept instead, so a page
is never lost only because the extractor gave up; the quality stage judges it later.
"""

from __future__ import annotations

import logging

import trafilatura

from pretrain_core.ingest.config import IngestConfig

logging.getLogger("trafilatura").setLevel(logging.ERROR)  # per-page "empty body" notices would flood the logs


def extract_main_text(html: bytes, url: str | None, cfg: IngestConfig) -> tuple[str, bool]:
    """(text, used_fallback): the extracted main text, or all visible text when extraction found none."""
    text = trafilatura.extract(
        html,
        url=url,
        fast=cfg.html_fast,
        favor_precision=cfg.html_favor == "precision",
        favor_recall=cfg.html_favor == "recall",
        include_comments=cfg.html_include_comments,
        include_tables=cfg.html_include_tables,
        deduplicate=False,
        output_format="txt",
    )
    if text and text.strip():
        return text, False
    if not cfg.html_fallback_all_text:
        return "", False
    return trafilatura.html2txt(html).strip(), True
