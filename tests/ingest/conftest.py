"""Real text for the ingestion tests: Debian's license texts (shipped in data/reference/licences) and Python's
own standard library."""

from __future__ import annotations

import html
import io
import pydoc_data.topics
import sysconfig
from collections.abc import Callable
from pathlib import Path

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

TOPICS = ("if", "while", "for", "try")  # sections of the Python reference used as crawled pages
NAV = "<nav><ul><li><a href='/'>Home</a></li><li><a href='/about'>About us</a></li></ul></nav>"
FOOTER = (
    "<footer><p>Copyright 2024 Example Corp. All rights reserved.</p><a href='/privacy'>Privacy policy</a></footer>"
)


@pytest.fixture(scope="session")
def licenses() -> Path:
    path = Path(__file__).resolve().parents[2] / "data" / "reference" / "licences"
    assert (path / "GPL-3").is_file(), "expected Debian's license texts shipped in the repo"
    return path


@pytest.fixture(scope="session")
def stdlib() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


@pytest.fixture(scope="session")
def paragraphs(licenses: Path) -> list[str]:
    """Non-empty paragraphs of the GPL-3 and Apache-2.0 texts, in file order."""
    text = (licenses / "GPL-3").read_text(encoding="utf-8") + (licenses / "Apache-2.0").read_text(encoding="utf-8")
    return [p.strip() for p in text.split("\n\n") if p.strip()]


@pytest.fixture(scope="session")
def article_page() -> Callable[[str], str]:
    """Web pages around real sections of the Python reference (pydoc_data), with navigation and a footer."""

    def page(topic: str) -> str:
        paragraphs = "".join(f"<p>{html.escape(p)}</p>" for p in pydoc_data.topics.topics[topic].split("\n\n"))
        body = f"{NAV}<article>{paragraphs}</article>{FOOTER}"
        return f"<html><head><title>{topic}</title></head><body>{body}</body></html>"

    return page


@pytest.fixture(scope="session")
def crawl_topics() -> tuple[str, ...]:
    return TOPICS


@pytest.fixture(scope="session")
def write_crawl(article_page: Callable[[str], str]) -> Callable[..., None]:
    """Writes `write_crawl(path, gzip=True)`: a WARC of pages around the TOPICS sections plus non-documents."""

    def write(path: Path, gzip: bool = True) -> None:
        """A small crawl: real pages, a redirect, an image, request/warcinfo records and a WET conversion record."""
        with open(path, "wb") as out:
            writer = WARCWriter(out, gzip=gzip)
            writer.write_record(writer.create_warcinfo_record(path.name, {"software": "pretrain-tests"}))

            def response(url: str, status: str, content_type: str, body: bytes) -> None:
                headers = StatusAndHeaders(status, [("Content-Type", content_type)], protocol="HTTP/1.1")
                record = writer.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=headers)
                writer.write_record(record)

            for topic in TOPICS:
                request = StatusAndHeaders(f"GET /{topic} HTTP/1.1", [("Host", "docs.example")], is_http_request=True)
                writer.write_record(
                    writer.create_warc_record(f"https://docs.example/{topic}", "request", http_headers=request)
                )
                response(
                    f"https://docs.example/{topic}", "200 OK", "text/html; charset=utf-8", article_page(topic).encode()
                )
            response("https://docs.example/old", "301 Moved Permanently", "text/html", b"")
            response("https://docs.example/logo.png", "200 OK", "image/png", b"\x89PNG\r\n\x1a\n")
            wet_text = pydoc_data.topics.topics["with"].encode()
            conversion = writer.create_warc_record(
                "https://docs.example/with",
                "conversion",
                payload=io.BytesIO(wet_text),
                warc_headers_dict={"Content-Type": "text/plain"},
            )
            writer.write_record(conversion)

    return write
