"""`pretrain card`: the data card of a finished build, or what changed between two builds' cards."""

from __future__ import annotations

import argparse
from typing import Any

from pretrain_core.config import load_config


def add_card_command(commands: Any, add_config_args: Any) -> None:
    card = commands.add_parser(
        "card",
        help="write the data card of a finished corpus build (Markdown, HTML, JSON), or compare two builds' cards",
        description="Sources with licence and attribution; tokens by domain, language, source and licence; each "
        "stage's counts and drop reasons with redacted examples; duplicate clusters, PII by kind, quality scores "
        "with their cut-offs, the mixture's targets against its realised shares, the tokenizer's bytes per token. "
        "Built from the build's manifests and per-shard counts, not by rereading the corpus; written under "
        "<root>/card/ (card.md with its PNG figures, a self-contained card.html, card.json). The corpus flow writes "
        "it at its end too. --compare A B prints what changed from build A to build B (each a card.json or a root "
        "holding card/card.json). --model CHECKPOINT prints a checkpoint's bill of materials instead: the tokens it "
        "was fed per domain, source and licence, and the corpus build (stage config hashes, card hash) they came from.",
    )
    add_config_args(card)
    card.add_argument("--compare", nargs=2, metavar=("A", "B"), help="compare two builds' cards instead")
    card.add_argument("--output", metavar="URL", help="--compare: also write the comparison (Markdown) here")
    card.add_argument(
        "--model",
        metavar="CHECKPOINT",
        help="print the bill of materials of a checkpoint directory or a training output (its latest checkpoint)",
    )


def run_card(args: argparse.Namespace) -> int:
    from pretrain_core.card.compare import compare_cards, load_card

    if args.model:
        from pretrain_core.train.checkpoint.catalog import read_meta, resolve_checkpoint
        from pretrain_core.train.shards.bill_report import bill_lines, fed_of, replayed_bill

        checkpoint = resolve_checkpoint(args.model)
        meta = read_meta(checkpoint)
        print(f"# Bill of materials: {checkpoint} (step {meta.get('step', '?')})\n")
        fed = fed_of(meta)
        if fed["bill"] is None:
            fed["bill"] = replayed_bill(meta)
            if fed["bill"] is not None:
                print("Saved before bills existed: replayed from its data position over its token shards.\n")
        print("\n".join(bill_lines(fed)))
        return 0
    if args.compare:
        from pretrain_core import storage

        comparison = compare_cards(load_card(args.compare[0]), load_card(args.compare[1]))
        print(comparison, end="")
        if args.output:
            storage.write_bytes(args.output, comparison.encode())
        return 0
    from pretrain_core.card.collect import collect_card
    from pretrain_core.card.render import write_card
    from pretrain_core.pipeline import configure_storage

    cfg = load_config(args.config, args.overrides)
    configure_storage(cfg)
    urls = write_card(collect_card(cfg))
    for kind, url in urls.items():
        print(f"{kind}: {url}")
    return 0
