from __future__ import annotations

import logging
from pathlib import Path

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from pretrain_core import storage
from pretrain_core.train.observe.metrics import MetricsLogger


def _scalars(directory: str, tag: str) -> list[tuple[int, float]]:
    events = EventAccumulator(directory)
    events.Reload()
    return [(e.step, e.value) for e in events.Scalars(tag)]


def test_local_output_gets_event_files_directly(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    metrics = MetricsLogger(str(tmp_path), enabled=True)
    with caplog.at_level(logging.INFO, logger="pretrain_core.train.observe.metrics"):
        metrics.scalars(1, {"train/loss": 2.5})
        metrics.progress(1, 10, {"loss": 2.5})
    metrics.close()
    assert _scalars(str(tmp_path / "tensorboard"), "train/loss") == [(1, 2.5)]
    assert "step 1/10 loss=2.5" in caplog.text


def test_remote_output_is_uploaded_on_sync(tmp_path: Path, memory_url: str) -> None:
    url = memory_url
    metrics = MetricsLogger(url, enabled=True)
    metrics.scalars(3, {"val/loss": 1.25})
    metrics.sync()
    uploaded = storage.list_files(storage.join(url, "tensorboard"))
    assert len(uploaded) == 1
    (tmp_path / "events").mkdir()
    (tmp_path / "events" / uploaded[0].rsplit("/", 1)[-1]).write_bytes(storage.read_bytes(uploaded[0]))
    assert _scalars(str(tmp_path / "events"), "val/loss") == [(3, 1.25)]
    metrics.close()


def test_disabled_logger_writes_nothing(tmp_path: Path) -> None:
    metrics = MetricsLogger(str(tmp_path), enabled=False)
    metrics.scalars(1, {"train/loss": 1.0})
    metrics.close()
    assert not (tmp_path / "tensorboard").exists()
