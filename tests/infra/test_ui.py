"""The Prefect UI driven by a real browser, as ops use it: Debian's Chromium under Playwright opens the `train`
deployment of a live stack (server, deployments, process workers), fills its form for a tiny run, starts it, reads its
logs and progress artifact, then starts a long run and cancels it from its page.

`PRETRAIN_UI_SHOTS=DIR` keeps a screenshot of each step there (docs/runbook.md shows them).
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterName
from prefect.client.schemas.objects import StateType

from tests.infra.test_operations import _training_processes
from tests.train.token_corpus import TokenData, build_token_data

playwright = pytest.importorskip(
    "playwright.sync_api", reason="the UI test drives Chromium with Playwright (dev extra)"
)
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# Server, deploy, workers, two flow-run processes with torchrun: minutes.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.usefixtures("workers"),
    # CI installs Chromium (make browser): there a missing one fails the test instead of skipping it
    pytest.mark.skipif(CHROMIUM is None and not os.environ.get("CI"), reason="no Chromium (make browser installs it)"),
]
# Chromium as root in a closed network: no sandbox, and none of the background connections it would retry.
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip
NAVIGATION_MS = 240_000
RUNS_TAB = re.compile(r".*/deployment/[^/?]*\?tab=Runs")
PROPERTY = "xpath=ancestor::div[contains(concat(' ', normalize-space(@class), ' '), ' schema-form-property ')][1]"


@pytest.fixture(scope="module")
def token_data(tmp_path_factory: pytest.TempPathFactory) -> TokenData:
    return build_token_data(str(tmp_path_factory.mktemp("ui-tokens")))


@pytest.fixture
def page(deployed_api: str) -> Iterator[Any]:
    with playwright.sync_playwright() as driver:
        assert CHROMIUM is not None, "no Chromium: make browser installs Debian's"
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(60_000)
        try:
            yield page
        finally:
            browser.close()


def _shot(page: Any, name: str) -> None:
    folder = os.environ.get("PRETRAIN_UI_SHOTS")
    if folder:
        page.screenshot(path=str(Path(folder) / f"ui-{name}.png"))


def _start_train_from_the_form(page: Any, ui_url: str, values: dict[str, str]) -> None:
    """Deployments → train → Run → Custom run, the run named and the form filled by its labels, submitted; ends on
    the run's page."""
    page.goto(f"{ui_url}/deployments")
    page.locator("a[href^='/deployments/deployment/']", has_text=re.compile(r"^train$")).click()
    page.locator(".run-menu__run-button").click()
    page.get_by_text("Custom run", exact=True).click()
    page.wait_for_url(re.compile(r".*/run\?.*"))
    page.locator(".flow-run-name-input input").fill(values["Run Name"])
    for label, value in values.items():
        name = page.locator(".schema-form-property__label", has_text=re.compile(f"^{re.escape(label)} \\(Optional\\)$"))
        name.locator(PROPERTY).locator("input, textarea").first.fill(value)
    _shot(page, f"form-{values['Max Steps']}")
    run_id = _submit(page, values["Run Name"])
    if RUNS_TAB.match(page.url):
        page.locator("a[href^='/runs/flow-run/']", has_text=values["Run Name"]).first.click(timeout=NAVIGATION_MS)
    else:  # the run exists but the page stayed on the form: open the run as its toast's link would
        page.goto(f"{ui_url}/runs/flow-run/{run_id}")
    page.wait_for_url(re.compile(r".*/runs/flow-run/.*"), timeout=NAVIGATION_MS)


def _submit(page: Any, name: str) -> str:
    """Submit the form; the id of the run it created. A click the page did not act on (no run after two minutes:
    seen in CI, never here) is clicked again once, as a person would; a second miss fails with what the page
    shows. Returns once the page shows the deployment's runs, or a minute after the run exists."""
    for attempt in range(2):
        page.get_by_role("button", name="Submit").click()
        deadline = time.monotonic() + NAVIGATION_MS / 1000 / 2
        created: float | None = None
        while time.monotonic() < deadline:
            runs = _flow_runs(name)
            if runs and created is None:
                created = time.monotonic()
            stalled = created is not None and time.monotonic() - created > 60
            if runs and (RUNS_TAB.match(page.url) or stalled):
                return str(runs[0].id)
            page.wait_for_timeout(1000)
        _shot(page, f"submit-missed-{attempt}")
    raise AssertionError(f"the form's Submit created no run {name!r}; the page shows: {page.inner_text('body')[:2000]}")


def _flow_runs(name: str) -> list[Any]:
    with get_client(sync_client=True) as client:
        return list(client.read_flow_runs(flow_run_filter=FlowRunFilter(name=FlowRunFilterName(any_=[name]))))


def _flow_run(name: str) -> Any:
    (run,) = _flow_runs(name)
    return run


def _finished_flow_run(name: str, timeout_s: float = 60) -> Any:
    """The run once its own state is final: the page's first "Completed" or "Cancelled" badge may be a task run's,
    seen while the flow run still writes its last state."""
    deadline = time.monotonic() + timeout_s
    while (run := _flow_run(name)).state is None or not run.state.is_final():
        if time.monotonic() > deadline:
            raise TimeoutError(f"flow run {name!r} still {run.state_name} after {timeout_s} s")
        time.sleep(1)
    return run


def test_ops_launch_a_run_from_the_form_read_its_logs_and_progress_and_cancel_another(
    page: Any, deployed_api: str, token_data: TokenData, tmp_path: Path
) -> None:
    ui_url = deployed_api.removesuffix("/api")
    values = {"Run Name": "ui-tiny", "Max Steps": "4", "Seq Len": str(token_data.seq_len), "Micro Batch Size": "4",
              "Warmup Steps": "1", "Checkpoint Every": "2", "Num Threads": "1", "Tokens Url": token_data.tokens_url,
              "Tokenizer Url": token_data.tokenizer_url, "Output Root": str(tmp_path)}  # fmt: skip
    _start_train_from_the_form(page, ui_url, values)
    page.get_by_text("Completed", exact=True).first.wait_for(timeout=240_000)
    page.get_by_text("training finished", exact=False).first.wait_for()  # the run's own log, in the Logs tab
    _shot(page, "run-logs")
    page.get_by_text("Artifacts", exact=True).click()
    progress = page.get_by_text(re.compile(r"ui-tiny: step 4/4")).first
    progress.wait_for()
    _shot(page, "run-artifacts")
    run = _finished_flow_run("ui-tiny")
    assert run.state is not None and run.state.type == StateType.COMPLETED
    assert (
        run.parameters["params"]["max_steps"] == 4 and run.parameters["params"]["tokens_url"] == token_data.tokens_url
    )
    assert (tmp_path / "ui-tiny" / "checkpoints" / "step-00000004").is_dir()

    long = {**values, "Run Name": "ui-long", "Max Steps": "1000000", "Checkpoint Every": "1000000"}
    _start_train_from_the_form(page, ui_url, long)
    page.get_by_text("Running", exact=True).first.wait_for(timeout=180_000)
    training = []
    while not training:  # the flow is Running before torchrun has started its ranks
        page.wait_for_timeout(1000)
        training = [p for p in _training_processes(str(tmp_path / "ui-long")) if p.is_running()]
    page.get_by_role("button", name="Cancel", exact=True).click()
    _shot(page, "cancel")
    page.get_by_role("button", name="Confirm", exact=True).click()
    page.get_by_text("Cancelled", exact=True).first.wait_for(timeout=180_000)
    _shot(page, "cancelled")
    assert _finished_flow_run("ui-long").state.type == StateType.CANCELLED
    _, alive = psutil.wait_procs(training, timeout=30)
    assert alive == [] and _training_processes(str(tmp_path / "ui-long")) == []
