from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pretrain_core.train.config import TrainConfig
from pretrain_core.train.trainer import train
from tests.train.token_corpus import WITHOUT_EVALUATIONS, TokenData, build_token_data


@pytest.fixture(scope="session")
def token_data(tmp_path_factory: pytest.TempPathFactory) -> TokenData:
    # windows long enough for zero-shot items (a context and a next sentence within one window)
    return build_token_data(str(tmp_path_factory.mktemp("eval-token-data")), seq_len=96)


@pytest.fixture(scope="session")
def trained_output(token_data: TokenData, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The output directory of a tiny model trained for 30 steps on the test shards."""
    output = str(tmp_path_factory.mktemp("eval-train"))
    config = TrainConfig(
        model=None, n_layer=2, n_head=2, d_model=32, seq_len=token_data.seq_len, micro_batch_size=8,
        max_steps=30, warmup_steps=3, lr=1e-2, eval_every=30, checkpoint_every=30, num_threads=1,
        tokens_url=token_data.tokens_url, tokenizer_url=token_data.tokenizer_url, output_url=output,
    )  # fmt: skip
    train(config)
    return output


@pytest.fixture
def fresh_run(trained_output: str, tmp_path: Path) -> str:
    """A copy of the trained output that nobody has evaluated yet."""
    return str(shutil.copytree(trained_output, tmp_path / "run", ignore=WITHOUT_EVALUATIONS))
