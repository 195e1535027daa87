"""Shared fixtures: an isolated Prefect home, a moto S3 server on loopback, real text samples."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from pretrain_core.pii.classifier import NameAddressTagger, load_tagger
from tests.shipped_text import LICENCES

# Fail any test that reads the host's documentation or other packages' data instead of what the repo ships.
pytest_plugins = ["tests.hermetic_guard"]

# Prefect reads its settings at import: isolate it before any test module imports it.
os.environ.setdefault("PREFECT_HOME", tempfile.mkdtemp(prefix="pretrain-prefect-"))
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.fixture(scope="session")
def tagger() -> NameAddressTagger:
    """The PII name/address tagger the package ships, loaded once."""
    return load_tagger(None)


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """A real S3 API (moto's server) on loopback, with a bucket named `pretrain-test`."""
    from moto.server import ThreadedMotoServer

    os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    import boto3

    boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1").create_bucket(Bucket="pretrain-test")
    yield endpoint
    server.stop()


@pytest.fixture
def real_texts() -> list[str]:
    """Real licence texts shipped in the repo (data/reference/licences): prose of varied length for stage tests."""
    texts = [p.read_text(encoding="utf-8") for p in sorted(LICENCES.glob("*")) if p.is_file()]
    assert texts, f"expected licence texts under {LICENCES}"
    return texts


@pytest.fixture(scope="session")
def prefect_harness() -> Iterator[None]:
    """One temporary Prefect API (SQLite) for the whole session; flow runs are recorded in it for real."""
    from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings
    from prefect.testing.utilities import prefect_test_harness

    with (
        prefect_test_harness(server_startup_timeout=90),
        temporary_settings(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}),
    ):
        yield


SMALL_SOURCES = ("fortunes_zh", "python_docs", "code", "manpages")


@pytest.fixture
def small_config_file(tmp_path: Path) -> Path:
    """A pipeline config over a real slice of the demo corpus, sized for tests (seconds per stage)."""
    return write_small_config(tmp_path)


def write_small_config(tmp_path: Path) -> Path:
    """`small_config_file` under any folder (a module-scoped fixture's too)."""
    import yaml

    from pretrain_core.config import load_config

    demo_sources = load_config().sources
    config = {
        "name": "small",
        "storage": {"root": str(tmp_path / "run")},
        "sources": [s.model_dump(mode="json") for s in demo_sources if s.name in SMALL_SOURCES],
        "tokenizer": {"vocab_size": 2000, "character_coverage": 0.98},
        "pack": {"seq_len": 64},
        "train": {
            "model": "tiny",
            "max_steps": 12,
            "warmup_steps": 2,
            "checkpoint_every": 6,
            "eval_every": 6,
            "micro_batch_size": 8,  # with 4, 12 steps do not lower validation perplexity for every seed
            "num_threads": 1,
        },
        "evaluate": {"batches_per_split": 2, "max_new_tokens": 8, "num_threads": 1},
    }
    path = tmp_path / "small.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    return path


def pytest_report_header() -> str:
    """Which BLAS kernel the run got: fitted weights differ in their last bits between kernels."""
    import numpy  # noqa: F401  (loads OpenBLAS, so threadpoolctl can see it)
    from threadpoolctl import threadpool_info

    kernels = sorted({f"{i['internal_api']} {i.get('architecture')}" for i in threadpool_info()})
    return f"BLAS kernels: {', '.join(kernels)} (OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', 'unset')})"
