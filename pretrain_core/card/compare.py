"""`pretrain card --compare A B`: what changed between two builds, for the review before a rebuild replaces the
last one: counts and drop rates per stage, drop reasons, token shares by domain, licence, source and language,
licences that appeared or disappeared, and the mixture's realised shares."""

from __future__ import annotations

from pretrain_core import storage
from pretrain_core.card.collect import CARD_DIR, DataCard
from pretrain_core.card.render import escape

CARD_FILE = "card.json"


def load_card(where: str) -> DataCard:
    """A card from its `card.json`, the folder holding it, or a build root holding `card/card.json`."""
    url = where if where.endswith(".json") else storage.join(where, CARD_FILE)
    if not where.endswith(".json") and not storage.exists(url):
        url = storage.join(where, CARD_DIR, CARD_FILE)
    if not storage.exists(url):
        raise FileNotFoundError(f"no data card at {url}: run `pretrain card` for that build first")
    return DataCard.model_validate(storage.read_json(url))


def _rate(dropped: float, total: float) -> float:
    return dropped / total if total else 0.0


def _shares(values: dict[str, float]) -> dict[str, float]:
    total = sum(values.values())
    return {key: value / total for key, value in values.items()} if total else {}


def _share_rows(a: dict[str, float], b: dict[str, float]) -> list[str]:
    """Rows of keys whose share moved, largest move first."""
    sa, sb = _shares(a), _shares(b)
    keys = sorted(set(sa) | set(sb), key=lambda k: -abs(sb.get(k, 0.0) - sa.get(k, 0.0)))
    return [
        f"| `{escape(key)}` | {100 * sa.get(key, 0.0):.2f} % | {100 * sb.get(key, 0.0):.2f} % | "
        f"{100 * (sb.get(key, 0.0) - sa.get(key, 0.0)):+.2f} pp |"
        for key in keys
        if abs(sb.get(key, 0.0) - sa.get(key, 0.0)) >= 5e-5 or (key in sa) != (key in sb)
    ]


def compare_cards(a: DataCard, b: DataCard) -> str:
    """The differences, as Markdown: B measured against A."""
    lines = [
        f"# Data card: {escape(b.name)} against {escape(a.name)}",
        "",
        f"A: `{a.root}` (config `{a.config_hash}`, code `{a.code_version}`); "
        f"B: `{b.root}` (config `{b.config_hash}`, code `{b.code_version}`).",
        "",
        "## Stages",
        "",
        "| stage | in A | in B | out A | out B | drop rate A | drop rate B | change |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    stages_b = {stage.name: stage for stage in b.stages}
    reasons: list[str] = []
    for stage_a in a.stages:
        stage_b = stages_b.get(stage_a.name)
        if stage_b is None:
            continue
        rate_a = _rate(sum(stage_a.dropped.values()), stage_a.docs_in)
        rate_b = _rate(sum(stage_b.dropped.values()), stage_b.docs_in)
        lines.append(
            f"| {stage_a.name} | {stage_a.docs_in:,} | {stage_b.docs_in:,} | {stage_a.docs_out:,} | "
            f"{stage_b.docs_out:,} | {100 * rate_a:.2f} % | {100 * rate_b:.2f} % | {100 * (rate_b - rate_a):+.2f} pp |"
        )
        for reason in sorted(set(stage_a.dropped) | set(stage_b.dropped)):
            before, after = stage_a.dropped.get(reason, 0), stage_b.dropped.get(reason, 0)
            if before != after:
                reasons.append(f"| {stage_a.name} | {escape(reason)} | {before:,} | {after:,} | {after - before:+,} |")
    lines += ["", "## Drop reasons that changed", ""]
    lines += ["| stage | reason | A | B | change |", "|---|---|---:|---:|---:|", *reasons] if reasons else ["None."]
    licences_a, licences_b = set(a.tokens_by_licence), set(b.tokens_by_licence)
    lines += ["", "## Licences", ""]
    lines += [f"- new in B: `{lic}`" for lic in sorted(licences_b - licences_a)]
    lines += [f"- gone from B: `{lic}`" for lic in sorted(licences_a - licences_b)]
    if licences_a == licences_b:
        lines.append("The same licences in both.")
    for title, share_a, share_b in (
        ("Token shares by licence", a.tokens_by_licence, b.tokens_by_licence),
        ("Token shares by domain", a.tokens_by_domain, b.tokens_by_domain),
        ("Token shares by source", a.tokens_by_source, b.tokens_by_source),
        ("Token shares by language", a.tokens_by_language, b.tokens_by_language),
    ):
        rows = _share_rows(share_a, share_b)
        lines += ["", f"## {title}", ""]
        lines += ["| value | A | B | change |", "|---|---:|---:|---:|", *rows] if rows else ["Unchanged."]
    lines += ["", "## Sequences", "", "| split | A | B | change |", "|---|---:|---:|---:|"]
    for split in ("train", "validation", "test"):
        before, after = a.sequences.get(split, 0), b.sequences.get(split, 0)
        lines.append(f"| {split} | {before:,} | {after:,} | {after - before:+,} |")
    return "\n".join(lines) + "\n"
