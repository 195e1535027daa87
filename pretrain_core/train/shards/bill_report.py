"""A checkpoint's bill of materials as text: what `pretrain card --model` prints and the evaluation artifacts show."""

from __future__ import annotations

from typing import Any

KIND_TITLES = {
    "domain": "tokens by domain",
    "source": "tokens by source",
    "licence": "tokens by licence (a sequence packing documents of several licences counts under each)",
    "quality_bucket": "tokens by quality bucket (of each sequence's dominant document)",
}


def bill_lines(meta: dict[str, Any]) -> list[str]:
    """Markdown lines: the tokens fed per domain, source and licence, and the corpus build they came from."""
    bill = meta.get("data", {}).get("bill")
    if not bill:
        return ["This checkpoint records no bill of materials (saved before bills existed)."]
    total = max(int(bill["tokens"]), 1)
    lines = [f"{int(bill['tokens']):,} tokens fed in {int(bill['sequences']):,} sequences."]
    corpus = meta.get("corpus") or {}
    if corpus:
        stages = ", ".join(f"{name} `{value}`" for name, value in corpus.get("stages", {}).items())
        card = corpus.get("card_sha256")
        lines += ["", f"Corpus build `{corpus.get('tokens_url')}`: stage config hashes {stages or 'unknown'}; "
                  f"data card sha256 {f'`{card}`' if card else 'none written'}."]  # fmt: skip
    for kind, title in KIND_TITLES.items():
        counts = sorted(bill["by"].get(kind, {}).items(), key=lambda kv: -kv[1])
        lines += ["", f"| {title} | tokens | share |", "|---|---:|---:|"]
        lines += [f"| {value} | {tokens:,} | {100 * tokens / total:.1f} % |" for value, tokens in counts]
    return lines


def bill_summary(meta: dict[str, Any]) -> str:
    """One line: the tokens fed and their shares by domain and quality bucket (the nightly report's row)."""
    bill = meta.get("data", {}).get("bill")
    if not bill:
        return "no bill of materials (saved before bills existed)"
    total = max(int(bill["tokens"]), 1)
    shares = [
        ", ".join(f"{value} {100 * tokens / total:.1f} %" for value, tokens in sorted(bill["by"].get(kind, {}).items()))
        for kind in ("domain", "quality_bucket")
    ]
    return f"{int(bill['tokens']):,} tokens: {'; '.join(s for s in shares if s)}"
