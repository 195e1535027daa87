"""The data card as Markdown (beside its figures) and as one self-contained HTML file (the same Markdown rendered by
markdown-it with raw HTML off, figures inlined as data URIs), and the card written under the build's root."""

from __future__ import annotations

import base64
import html
import json
import re
from collections.abc import Callable

from markdown_it import MarkdownIt

from pretrain_core import storage
from pretrain_core.card.collect import DataCard, StageFacts
from pretrain_core.card.plots import FIGURES, draw_all

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|#])")
Links = dict[str, str]  # a drawn figure's name → where the card finds it


def escape(text: str) -> str:
    """Text from the corpus or the config, shown as written: Markdown's special characters escaped."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def _n(value: float) -> str:
    return f"{value:,.0f}"


def _pct(part: float, total: float) -> str:
    return f"{100 * part / total:.1f} %" if total else "-"


_NUMBER = re.compile(r"^[-+]?[\d,.]+( %| pp)?$|^-$")


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table; columns of numbers align right."""
    numeric = [bool(rows) and all(_NUMBER.match(row[i]) for row in rows) for i in range(len(header))]
    aligns = ["---:" if right else "---" for right in numeric]
    return [f"| {' | '.join(header)} |", f"| {' | '.join(aligns)} |", *(f"| {' | '.join(r)} |" for r in rows), ""]


def _figure(name: str, links: Links) -> list[str]:
    return [f"![{FIGURES[name][0]}]({links[name]})", ""] if name in links else []


def _sources(card: DataCard, links: Links) -> list[str]:
    total = sum(card.tokens_by_licence.values())
    sources = [
        [
            f"[{escape(s.name)}]({s.url})" if s.url else escape(s.name), s.domain, s.format, f"`{s.licence}`",
            escape(s.attribution or "-"), _n(s.documents_ingested), _n(s.tokens),
        ]
        for s in card.sources
    ]  # fmt: skip
    header = ["source", "domain", "format", "licence (SPDX)", "attribution", "documents ingested", "tokens"]
    by_licence = [[f"`{lic}`", _n(t), _pct(t, total)] for lic, t in card.tokens_by_licence.items()]
    return [
        *_table(header, sources),
        "Training tokens by licence (realised in the mixture, upsampled copies counted):",
        "",
        *_table(["licence", "tokens", "share"], by_licence),
        *_figure("licences", links),
    ]


def _tokens(card: DataCard, links: Links) -> list[str]:
    total = sum(card.tokens_by_domain.values())
    rows = [[domain, _n(tokens), _pct(tokens, total)] for domain, tokens in card.tokens_by_domain.items()]
    return [
        "Document tokens of every split, upsampled copies counted:",
        "",
        *_table(["domain", "tokens", "share"], rows),
        *_figure("sources", links),
        *_figure("languages", links),
    ]


def _mixture(card: DataCard, links: Links) -> list[str]:
    rows = [
        [d, f"{100 * m.target:.1f} %", f"{100 * m.realised:.1f} %", _n(m.tokens), f"{m.epochs:.2f}"]
        for d, m in card.mixture.items()
    ]
    return [
        "The training split's token budget per domain: the configured weight, the share the plan reached, and how "
        "many times each domain's documents were seen (epochs):",
        "",
        *_table(["domain", "target", "realised", "tokens", "epochs"], rows),
        *_figure("mixture", links),
    ]


def _stages(card: DataCard, links: Links) -> list[str]:
    rows = [[s.name, _n(s.docs_in), _n(s.docs_out), _n(sum(s.dropped.values())), _reasons(s)] for s in card.stages]
    examples = [
        f"- {stage.name}, {escape(reason)}: {escape(text)}"
        for stage in card.stages
        for reason, texts in stage.examples.items()
        for text in texts
    ]
    return [
        *_table(["stage", "in", "out", "dropped", "reasons"], rows),
        *_figure("drops", links),
        "Examples of what was dropped (the first found per reason; emails, phone numbers, cards and other "
        "structured personal data redacted; cut short):",
        "",
        *(examples or ["- none"]),
        "",
    ]


def _reasons(stage: StageFacts) -> str:
    ordered = sorted(stage.dropped.items(), key=lambda kv: -kv[1])
    return ", ".join(f"{escape(reason)} {_n(n)}" for reason, n in ordered) or "-"


def _duplicates(card: DataCard, links: Links) -> list[str]:
    rows = [[size, _n(n)] for size, n in card.cluster_sizes.items()]
    return [*_table(["cluster size", "kept documents"], rows), *_figure("clusters", links)]


def _personal_data(card: DataCard, links: Links) -> list[str]:
    rows = [[escape(kind), _n(n)] for kind, n in card.pii_by_type.items()]
    return [
        "Occurrences found by the PII stage (redacted or dropped as configured):",
        "",
        *_table(["kind", "found"], rows),
    ]


def _decontamination(card: DataCard, links: Links) -> list[str]:
    rows = [
        [escape(name), _n(c["documents"]), _n(c["ngrams"]), _n(c["redacted"]), _n(c["dropped"])]
        for name, c in card.decontamination.items()
    ]
    return [
        "Training documents sharing an n-gram with an evaluation set (`heldout`: the corpus's own validation and "
        "test split, which the zero-shot tasks are built from); a document overlapping several sets counts in each "
        "and is dropped under the one it shares most with:",
        "",
        *(
            _table(["evaluation set", "documents", "n-grams", "redacted", "dropped"], rows)
            if rows
            else ["none found", ""]
        ),
    ]


def _quality(card: DataCard, links: Links) -> list[str]:
    kept = "; ".join(f"{domain} {', '.join(buckets)}" for domain, buckets in card.quality_kept_buckets.items())
    tail, head = card.quality_cutoffs
    return [
        f"Buckets by score: tail below {tail}, head from {head}; kept per domain: {kept}.",
        "",
        *_figure("quality", links),
    ]


def _languages(card: DataCard, links: Links) -> list[str]:
    rows = [
        [
            lang, _n(card.languages.get(lang, 0)), _n(card.tokens_by_language.get(lang, 0)),
            f"{card.bytes_per_token[lang]:.2f}" if lang in card.bytes_per_token else "-",
        ]
        for lang in dict.fromkeys([*card.tokens_by_language, *card.languages])
    ]  # fmt: skip
    facts = [f"{key} {value}" for key, value in card.tokenizer.items() if key != "sha256"]
    if "sha256" in card.tokenizer:
        facts.append(f"sha256 `{card.tokenizer['sha256'][:16]}…`")
    return [
        *_table(["language", "documents after cleaning", "tokens", "bytes per token"], rows),
        f"Tokenizer: {', '.join(facts)}.",
        "",
        *_figure("bytes_per_token", links),
    ]


SECTIONS: dict[str, Callable[[DataCard, Links], list[str]]] = {
    "Sources and licences": _sources,
    "Tokens": _tokens,
    "Mixture": _mixture,
    "What each stage did": _stages,
    "Duplicates": _duplicates,
    "Personal data": _personal_data,
    "Decontamination": _decontamination,
    "Quality": _quality,
    "Languages and the tokenizer": _languages,
}  # the card's sections in order (the tests find them by these headings)


def render_markdown(card: DataCard, links: Links) -> str:
    """The card; ``links`` maps each drawn figure's name to where the Markdown finds it."""
    sequences = card.sequences
    lines = [
        f"# Data card: {escape(card.name)}",
        "",
        f"Build under `{card.root}`, pipeline config `{card.config_hash}`, code `{card.code_version}`. "
        f"{_n(sum(sequences.values()))} sequences of tokens (train {_n(sequences.get('train', 0))}, validation "
        f"{_n(sequences.get('validation', 0))}, test {_n(sequences.get('test', 0))}). Every figure below comes "
        "from the build's manifests and per-shard counts.",
        "",
    ]
    for heading, section in SECTIONS.items():
        lines += [f"## {heading}", "", *section(card, links)]
    return "\n".join(lines)


def render_html(card: DataCard, pngs: dict[str, bytes]) -> str:
    """One file that opens anywhere: the Markdown card rendered, its figures inline."""
    links = {name: f"data:image/png;base64,{base64.b64encode(png).decode()}" for name, png in pngs.items()}
    body = MarkdownIt("commonmark", {"html": False}).enable("table").render(render_markdown(card, links))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Data card: {html.escape(card.name)}</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 70rem; margin: 2rem auto; padding: 0 1rem; color: #222; }}
table {{ border-collapse: collapse; margin: 0.5rem 0 1rem; font-size: 0.9rem; }}
th, td {{ border: 1px solid #ccc; padding: 0.25rem 0.5rem; }} th {{ background: #f0f0f0; }}
td[style*="right"] {{ white-space: nowrap; }}
img {{ max-width: 100%; }} code {{ font-size: 0.85rem; }} h2 {{ border-bottom: 1px solid #ddd; margin-top: 2rem; }}
</style></head><body>
{body}</body></html>
"""


def write_card(card: DataCard) -> dict[str, str]:
    """`card.json`, `card.md` with its PNG figures, and the self-contained `card.html`, in the card's folder
    (`<root>/card/`); returns their URLs by kind. A file whose bytes would not change is left alone, so an
    unchanged rebuild touches nothing."""
    folder = card.folder
    pngs = draw_all(card)
    for name, png in pngs.items():
        _put(storage.join(folder, f"{name}.png"), png)
    urls = {kind: storage.join(folder, f"card.{kind}") for kind in ("json", "md", "html")}
    _put(urls["json"], json.dumps(card.model_dump(mode="json"), indent=2, ensure_ascii=False).encode())
    _put(urls["md"], render_markdown(card, {name: f"{name}.png" for name in pngs}).encode())
    _put(urls["html"], render_html(card, pngs).encode())
    return urls


def _put(url: str, data: bytes) -> None:
    if not storage.exists(url) or storage.read_bytes(url) != data:
        storage.write_bytes(url, data)
