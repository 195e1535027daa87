from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from pretrain_core import storage
from pretrain_core.train.config import TrainConfig
from tests.train.token_corpus import TokenData, build_token_data


@pytest.fixture(scope="session")
def token_data(tmp_path_factory: pytest.TempPathFactory) -> TokenData:
    return build_token_data(str(tmp_path_factory.mktemp("token-data")))


@pytest.fixture
def memory_url() -> Iterator[str]:
    """A fresh memory:// root (fsspec's memory filesystem lives as long as the process), removed afterwards."""
    url = f"memory://test-{uuid.uuid4().hex}"
    yield url
    storage.remove(url)


@pytest.fixture
def tiny_config(token_data: TokenData, tmp_path: Any) -> Callable[..., TrainConfig]:
    """A 2-layer, 32-wide model on the test shards, one thread: a step takes milliseconds."""

    def make(**overrides: Any) -> TrainConfig:
        values: dict[str, Any] = {
            "model": None,
            "n_layer": 2,
            "n_head": 2,
            "d_model": 32,
            "seq_len": token_data.seq_len,
            "micro_batch_size": 4,
            "grad_accum_steps": 2,
            "max_steps": 6,
            "warmup_steps": 2,
            "lr": 1e-2,
            "eval_every": 3,
            "eval_batches": 2,
            "checkpoint_every": 3,
            "log_every": 1,
            "num_threads": 1,
            "peak_flops_per_device": 1e11,  # no matmul benchmark in every test (its own test measures it)
            "tokens_url": token_data.tokens_url,
            "tokenizer_url": token_data.tokenizer_url,
            "output_url": str(tmp_path / "train"),
        }
        return TrainConfig(**{**values, **overrides})

    return make
