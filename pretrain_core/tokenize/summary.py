"""Turn the tokenize stage's flat stats (summed over shards in its manifest) into a per split/domain report."""

from __future__ import annotations

from typing import Any

from pretrain_core.tokenize.splits import SPLITS


def summarize_tokens(stats: dict[str, float]) -> dict[str, Any]:
    """Tokens and token shares per split and domain, sequences per split and the discarded tail."""
    tokens: dict[str, dict[str, int]] = {split: {} for split in SPLITS}
    for key, value in stats.items():  # tokens_<domain>_<split>
        name, _, rest = key.partition("_")
        domain, _, split = rest.rpartition("_")
        if name == "tokens" and split in tokens and domain:
            tokens[split][domain] = int(value)
    shares = {
        split: {d: round(n / sum(per_domain.values()), 6) for d, n in sorted(per_domain.items())}
        for split, per_domain in tokens.items()
        if sum(per_domain.values())
    }
    return {
        "tokens": {split: dict(sorted(per_domain.items())) for split, per_domain in tokens.items()},
        "shares": shares,
        "sequences": {split: int(stats.get(f"sequences_{split}", 0)) for split in SPLITS},
        "tokens_discarded_tail": int(stats.get("tokens_discarded_tail", 0)),
    }
