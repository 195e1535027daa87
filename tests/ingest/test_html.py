from __future__ import annotations

from collections.abc import Callable

from pretrain_core.ingest.config import IngestConfig
from pretrain_core.ingest.html import extract_main_text


def test_main_text_keeps_the_article_and_drops_boilerplate(article_page: Callable[[str], str]) -> None:
    text, fallback = extract_main_text(article_page("while").encode(), "https://docs.example/while", IngestConfig())
    assert not fallback
    assert 'The "while" statement is used for repeated execution' in text
    assert "Privacy policy" not in text and "About us" not in text


def test_pages_without_main_content_fall_back_to_visible_text_or_nothing() -> None:
    listing = (
        b"<html><body><ul><li><a href='/a'>alpha.txt</a></li><li><a href='/b'>beta.txt</a></li></ul></body></html>"
    )
    strict = IngestConfig(html_favor="precision")
    assert extract_main_text(listing, None, strict) == ("alpha.txt beta.txt", True)
    assert extract_main_text(listing, None, IngestConfig(html_favor="precision", html_fallback_all_text=False)) == (
        "",
        False,
    )
    assert extract_main_text(b"<html><head><title>t</title></head><body></body></html>", None, strict)[0] == ""
