"""`python -m pretrain_core.train`: one training process (torchrun starts one per rank)."""

from __future__ import annotations

import argparse
import logging
import os
import sys

from pretrain_core.train.config import TrainConfig
from pretrain_core.train.launch.flags import add_config_flags, config_from_args
from pretrain_core.train.trainer import train

EXIT_STOPPED = 143  # 128 + SIGTERM: the run saved a checkpoint and stopped before max_steps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pretrain_core.train",
        description="Train the GPT model on token shards; resumes from the latest checkpoint under --output-url.",
    )
    add_config_flags(parser, TrainConfig)
    config = config_from_args(TrainConfig, parser.parse_args(argv))
    logging.basicConfig(
        level=logging.INFO,
        format=f"%(asctime)s rank{os.environ.get('RANK', '0')} %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    result = train(config)
    return 0 if result.status == "completed" else EXIT_STOPPED
