"""`python -m pretrain_core.evaluate CHECKPOINT`: score a checkpoint and print its eval.json."""

from __future__ import annotations

import argparse
import logging

from pretrain_core.evaluate.evaluator import evaluate_checkpoint
from pretrain_core.train.config import EvalConfig
from pretrain_core.train.config_cli import add_config_flags, config_from_args


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pretrain_core.evaluate",
        description="Per-domain validation/test loss, perplexity and bits per byte of a checkpoint, plus samples. "
        "Writes eval.json next to the checkpoint.",
    )
    parser.add_argument("checkpoint", help="A checkpoint directory URL, or a training output URL (uses its latest).")
    parser.add_argument("--tokens-url", help="Token shards root (default: the one the checkpoint was trained on).")
    parser.add_argument("--tokenizer-url", help="SentencePiece model (default: the checkpoint's).")
    add_config_flags(parser, EvalConfig)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    result = evaluate_checkpoint(
        args.checkpoint, args.tokens_url, args.tokenizer_url, config_from_args(EvalConfig, args)
    )
    print(result.model_dump_json(indent=2))
    return 0
