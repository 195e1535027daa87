"""evaluate-checkpoint as a real Prefect flow run over a real tiny checkpoint."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from flows.evaluate_checkpoint import evaluate_checkpoint_flow
from pretrain_core import storage
from pretrain_core.evaluate.history import read_results
from pretrain_core.train.config import EvalConfig
from tests.evaluate import conftest as evaluate_fixtures
from tests.train.token_corpus import WITHOUT_EVALUATIONS

token_data = evaluate_fixtures.token_data
trained_output = evaluate_fixtures.trained_output

CFG = EvalConfig(batches_per_split=2, batch_size=8, max_new_tokens=4, num_threads=1)


@pytest.fixture
def checkpoint(trained_output: str, tmp_path: Path) -> str:
    """The trained step-30 checkpoint of a run named `run-a` under `<tmp>/train`."""
    run = shutil.copytree(trained_output, tmp_path / "train" / "run-a", ignore=WITHOUT_EVALUATIONS)
    return str(run / "checkpoints" / "step-00000030")


@pytest.mark.usefixtures("prefect_harness")
def test_evaluates_writes_eval_json_and_appends_to_the_results_table(checkpoint: str, tmp_path: Path) -> None:
    result = evaluate_checkpoint_flow(checkpoint_url=checkpoint, step=30, cfg=CFG)
    assert result.step == 30 and result.checkpoint_url == checkpoint
    assert storage.read_json(storage.join(checkpoint, "eval.json")) == result.model_dump(mode="json")
    table = read_results(str(tmp_path / "train" / "eval_results.parquet")).to_pylist()
    assert {(r["run"], r["step"], r["checkpoint"]) for r in table} == {("run-a", 30, checkpoint)}
    overall = next(r for r in table if (r["split"], r["domain"]) == ("validation", "all"))
    assert overall["perplexity"] == result.splits["validation"].overall.perplexity  # type: ignore[union-attr]
    assert overall["date"].endswith("+00:00")

    again = evaluate_checkpoint_flow(checkpoint_url=checkpoint, step=30, cfg=CFG)  # the event delivered twice
    assert again == result  # the first evaluation stands, and its rows are not recorded a second time
    assert read_results(str(tmp_path / "train" / "eval_results.parquet")).to_pylist() == table


@pytest.mark.usefixtures("prefect_harness")
def test_rows_an_evaluation_killed_after_its_record_lost_are_added_by_the_next_run(
    checkpoint: str, tmp_path: Path
) -> None:
    """A kill between the durable record and the rows (found by the chaos run): the event delivered again, or any
    later evaluation of the run, adds the missing rows from the record, once."""
    results_url = str(tmp_path / "train" / "eval_results.parquet")
    evaluate_checkpoint_flow(checkpoint_url=checkpoint, step=30, cfg=CFG)
    table = read_results(results_url)
    storage.write_parquet(results_url, table.slice(0, 0))  # the rows never made it
    evaluate_checkpoint_flow(checkpoint_url=checkpoint, step=30, cfg=CFG)
    restored = read_results(results_url).to_pylist()
    assert sorted((r["step"], r["split"], r["domain"]) for r in restored) == sorted(
        (r["step"], r["split"], r["domain"]) for r in table.to_pylist()
    )
    evaluate_checkpoint_flow(checkpoint_url=checkpoint, step=30, cfg=CFG)  # and once only
    assert len(read_results(results_url)) == len(restored)


@pytest.mark.usefixtures("prefect_harness")
def test_a_step_that_is_not_the_checkpoints_is_refused(checkpoint: str, tmp_path: Path) -> None:
    state = evaluate_checkpoint_flow(checkpoint_url=checkpoint, step=31, cfg=CFG, return_state=True)
    assert state.is_failed()
    with pytest.raises(ValueError, match="holds step 30, not the requested step 31"):
        state.result()
    assert not (tmp_path / "train" / "eval_results.parquet").exists()
    assert not Path(checkpoint, "eval.json").exists()


def test_trigger_templated_strings_are_coerced_to_the_parameter_types(checkpoint: str) -> None:
    """A deployment trigger passes `{{ event.payload.step }}` as text; the flow's signature types it."""
    params = evaluate_checkpoint_flow.validate_parameters({"checkpoint_url": checkpoint, "step": "30"})
    assert params["step"] == 30


@pytest.mark.usefixtures("prefect_harness")
def test_earlier_checkpoints_still_waiting_are_evaluated_first_in_step_order(checkpoint: str, tmp_path: Path) -> None:
    """Queued flow runs may start in any order (200 before 100): whichever runs first evaluates the run's
    earlier unevaluated checkpoints before its own, and a later run finds its checkpoint done."""
    earlier = Path(checkpoint).parent / "step-00000010"
    shutil.copytree(checkpoint, earlier)
    meta = storage.read_json(str(earlier / "meta.json"))
    storage.write_json(str(earlier / "meta.json"), {**meta, "step": 10})
    evaluate_checkpoint_flow(checkpoint_url=checkpoint, step=30, cfg=CFG)
    table = read_results(str(tmp_path / "train" / "eval_results.parquet")).to_pylist()
    assert list(dict.fromkeys(r["step"] for r in table)) == [10, 30]
    assert (earlier / "eval.json").exists()
    late = evaluate_checkpoint_flow(checkpoint_url=str(earlier), step=10, cfg=CFG)  # its own run, started last
    assert late.step == 10  # the stored evaluation, not a second one, and no second set of rows
    assert read_results(str(tmp_path / "train" / "eval_results.parquet")).to_pylist() == table
