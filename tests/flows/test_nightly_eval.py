"""nightly-eval as real Prefect flow runs: a first night, an unchanged night, then a night whose newest checkpoint
is worse (its weights re-initialised), which must fail the run, list the regression and emit an event."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
import torch
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey, FlowRunFilter, FlowRunFilterId
from prefect.client.schemas.objects import State
from prefect.events.filters import EventFilter, EventNameFilter

from flows.nightly_eval import EvalRegressionError, nightly_eval
from pretrain_core import storage
from pretrain_core.evaluate.history import read_results
from pretrain_core.train.checkpoint.catalog import MANIFEST, checkpoint_url, read_meta
from pretrain_core.train.checkpoint.dcp_format import save_shards
from pretrain_core.train.checkpoint.store import STATE_DIR
from pretrain_core.train.config import EvalConfig
from pretrain_core.train.model.gpt import GPT, ModelArgs
from pretrain_core.train.shards.bill_report import bill_summary, fed_of
from tasks.evaluation import REGRESSION_EVENT
from tests.evaluate import conftest as evaluate_fixtures
from tests.train.token_corpus import WITHOUT_EVALUATIONS

token_data = evaluate_fixtures.token_data
trained_output = evaluate_fixtures.trained_output

CFG = EvalConfig(batches_per_split=2, batch_size=8, max_new_tokens=4, num_threads=1)


def commit_untrained_checkpoint(run_dir: Path, from_step: int, step: int) -> str:
    """A complete checkpoint at ``step`` whose model weights are freshly initialised (what a diverged run leaves)."""
    source, target = checkpoint_url(str(run_dir), from_step), checkpoint_url(str(run_dir), step)
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("eval.json", "evaluations", MANIFEST))
    meta = read_meta(target)
    torch.manual_seed(0)
    shutil.rmtree(storage.join(target, STATE_DIR))
    save_shards({"model": GPT(ModelArgs(**meta["model_args"])).state_dict()}, storage.join(target, STATE_DIR))
    storage.write_json(storage.join(target, "meta.json"), {**meta, "step": step})
    storage.write_json(
        storage.join(target, MANIFEST), {**storage.read_json(storage.join(source, MANIFEST)), "step": step}
    )
    return target


def regression_events(run: str, expected: int, attempts: int = 40) -> list[dict]:
    """Regression events about ``run`` stored by the API; it persists events in batches shortly after they arrive,
    so wait (at most ``attempts`` half seconds) for ``expected`` of them."""
    found: list[dict] = []
    with get_client(sync_client=True) as client:
        for _ in range(attempts):
            page = client.read_events(EventFilter(event=EventNameFilter(name=[REGRESSION_EVENT])), limit=50)
            found = [e.payload for e in page.events if e.resource.id == f"pretrain.run.{run}"]
            if len(found) >= expected:
                break
            time.sleep(0.5)
    return found


def report_of(state: State) -> str:
    """The markdown report the flow run published."""
    run_id = state.state_details.flow_run_id
    assert run_id is not None
    with get_client(sync_client=True) as client:
        [artifact] = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["eval-trends"])),
            flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[run_id])),
        )
    return str(artifact.data)


@pytest.mark.usefixtures("prefect_harness")
def test_nightly_runs_record_history_and_a_worse_checkpoint_fails_the_run(trained_output: str, tmp_path: Path) -> None:
    runs_root = tmp_path / "train"
    run_dir = Path(shutil.copytree(trained_output, runs_root / "run-a", ignore=WITHOUT_EVALUATIONS))
    (runs_root / "run-idle").mkdir()  # no checkpoint yet: not evaluated

    first = nightly_eval(runs_root=str(runs_root), tolerance=0.05, cfg=CFG)
    assert [(r.run, r.step) for r in first.evaluated] == [("run-a", 30)]
    assert first.results_url == str(runs_root / "eval_results.parquet")
    rows = read_results(first.results_url).to_pylist()
    assert rows and {(r["run"], r["step"]) for r in rows} == {("run-a", 30)}
    assert {r["split"] for r in rows} == {"validation", "test", "zero_shot"} and "all" in {r["domain"] for r in rows}
    assert all(r["bits_per_byte_stderr"] > 0 for r in rows if r["split"] != "zero_shot")
    assert {r["domain"] for r in rows if r["split"] == "zero_shot"} >= {"continuation/en", "last_word/en"}
    for url in first.trend_plots.values():
        assert storage.read_bytes(url).startswith(b"\x89PNG")

    unchanged = nightly_eval(runs_root=str(runs_root), tolerance=0.05, cfg=CFG, return_state=True)
    assert unchanged.is_completed()  # the same checkpoint scores the same: no regression
    assert read_results(first.results_url).num_rows == 2 * len(rows)

    commit_untrained_checkpoint(run_dir, from_step=30, step=40)
    worse = nightly_eval(runs_root=str(runs_root), tolerance=0.05, cfg=CFG, return_state=True)
    assert worse.is_failed()
    with pytest.raises(EvalRegressionError) as failure:
        worse.result()
    regressions = failure.value.regressions
    assert ("run-a", "validation", "all") in {(r.run, r.split, r.domain) for r in regressions}
    assert all(r.previous_step == 30 and r.current_step == 40 for r in regressions)
    for r in regressions:  # worse beyond tolerance and beyond twice the combined standard error
        assert r.metric in ("bits_per_byte", "accuracy") and r.noise is not None
        worse_by = r.current - r.previous if r.metric == "bits_per_byte" else r.previous - r.current
        assert worse_by > r.noise and (r.metric == "accuracy" or r.current > r.previous * 1.05)
    assert "run-a validation/all bits_per_byte" in str(failure.value)
    assert read_results(first.results_url).num_rows == 3 * len(rows)  # recorded before failing

    report = report_of(worse)
    assert f"## Regressions ({len(regressions)})" in report
    assert "- run-a validation/all bits_per_byte" in report and "| run-a | 40 |" in report
    assert "## Zero-shot tasks" in report and "continuation/en" in report
    assert report.count("](data:image/png;base64,") == 3
    fed = bill_summary(fed_of(read_meta(str(run_dir / "checkpoints" / "step-00000040"))))
    assert f"- run-a step 40: {fed}" in report and fed.split(": ")[1].startswith("code ")

    events = regression_events("run-a", expected=len(regressions))
    assert len(events) == len(regressions)
    validation = next(e for e in events if (e["split"], e["domain"]) == ("validation", "all"))
    assert validation["metric"] == "bits_per_byte" and validation["current"] > validation["previous"]
    assert validation["tolerance"] == 0.05 and validation["current_step"] == 40
