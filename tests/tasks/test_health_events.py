"""Rank 0's health lines become Prefect events about the run, which an automation can match."""

from __future__ import annotations

import time

import pytest
from prefect.client.orchestration import get_client
from prefect.events.filters import EventFilter, EventNameFilter, EventResourceFilter

from pretrain_core.train.observe.health import HealthEvent
from tasks.training import announce_health


@pytest.mark.usefixtures("prefect_harness")
def test_a_loss_spike_line_becomes_an_event_about_the_run_and_other_lines_do_not() -> None:
    spike = HealthEvent("loss-spike", 300, {"loss": 5.3, "sigma": 8.2, "mean": 3.1})
    logged = "2026-12-06 10:00:00,000 rank0 WARNING pretrain_core.train.trainer: " + spike.line()
    assert announce_health("health-events-run", logged)
    assert not announce_health("health-events-run", "step 300/400 loss=5.3 lr=0.0003")
    event_filter = EventFilter(
        event=EventNameFilter(name=["pretrain.training.loss-spike"]),
        resource=EventResourceFilter(id=["pretrain.run.health-events-run"]),
    )
    deadline = time.monotonic() + 20  # the API persists events in batches
    while True:
        with get_client(sync_client=True) as client:
            events = client.read_events(filter=event_filter, limit=10).events
        if events or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert [e.payload for e in events] == [{"step": 300, "loss": 5.3, "sigma": 8.2, "mean": 3.1}]
