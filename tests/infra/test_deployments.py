"""infra/prefect.yaml deployed for real: a `prefect server start` on loopback, `prefect deploy --all`, then the API."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.actions import WorkPoolCreate, WorkPoolUpdate
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterState, FlowRunFilterStateType
from prefect.client.schemas.objects import StateType
from prefect.events.schemas.automations import EventTrigger
from prefect.events.schemas.events import ResourceSpecification
from prefect.exceptions import PrefectHTTPStatusError
from prefect.states import Running, Scheduled, State

from pretrain_core.ablation.spec import AblationSpec
from pretrain_core.sweep.spec import SweepSpec
from pretrain_core.train.params import TrainRunParams
from tests.infra.conftest import POOLS
from tests.infra.processes import stack_script
from tests.shipped_text import REPO_ROOT

ENTRYPOINTS = {
    "corpus-rebuild/corpus-rebuild": "flows/corpus_rebuild.py:corpus_rebuild",
    "train/train": "flows/train.py:train_run",
    "evaluate-checkpoint/evaluate-checkpoint": "flows/evaluate_checkpoint.py:evaluate_checkpoint_flow",
    "nightly-eval/nightly-eval": "flows/nightly_eval.py:nightly_eval",
    "ablation/ablation": "flows/ablation.py:ablation",
    "sweep/sweep": "flows/sweep.py:sweep",
}

# Server start plus `prefect deploy` (which imports every flow) take ~50 s on a loaded 2-core machine.
pytestmark = pytest.mark.slow


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """Follow a local `$ref` (`#/definitions/X` or `#/$defs/X`) to the schema it names."""
    ref = node.get("$ref")
    if ref is None:
        for option in node.get("allOf", []) + node.get("anyOf", []):
            if "$ref" in option:
                return _resolve(schema, option)
        return node
    _, section, name = ref.split("/")
    return _resolve(schema, schema[section][name])


def test_every_deployment_exists_with_its_entrypoint(deployed_api: str) -> None:
    with get_client(sync_client=True) as client:
        for full_name, entrypoint in ENTRYPOINTS.items():
            deployment = client.read_deployment_by_name(full_name)
            assert deployment.entrypoint == entrypoint
            assert deployment.enforce_parameter_schema
            assert deployment.pull_steps == [
                {"prefect.deployments.steps.set_working_directory": {"directory": str(REPO_ROOT)}}
            ]
        crons = {
            name: [s.schedule.cron for s in client.read_deployment_by_name(name).schedules]  # type: ignore[union-attr]
            for name in ("corpus-rebuild/corpus-rebuild", "nightly-eval/nightly-eval")
        }
        assert crons == {"corpus-rebuild/corpus-rebuild": ["0 2 * * *"], "nightly-eval/nightly-eval": ["0 3 * * *"]}
        assert client.read_deployment_by_name("train/train").work_pool_name == "pretrain-gpu"
        assert client.read_deployment_by_name("nightly-eval/nightly-eval").work_pool_name == "pretrain-cpu"


def test_train_form_describes_every_training_knob(deployed_api: str) -> None:
    with get_client(sync_client=True) as client:
        schema = client.read_deployment_by_name("train/train").parameter_openapi_schema
    assert schema is not None
    params = _resolve(schema, schema["properties"]["params"])
    assert set(params["properties"]) == set(TrainRunParams.model_fields)
    undescribed = [name for name, prop in params["properties"].items() if not _resolve(schema, prop).get("description")]
    assert undescribed == []


def _check_spec_form(name: str, fields: set[str], bad: dict[str, Any]) -> None:
    """The deployment's `spec` form has every field of the spec model, each described, and the server refuses
    ``bad``."""
    with get_client(sync_client=True) as client:
        deployment = client.read_deployment_by_name(name)
        schema = deployment.parameter_openapi_schema
        assert schema is not None
        spec = _resolve(schema, schema["properties"]["spec"]["anyOf"][0])
        assert set(spec["properties"]) == fields
        assert [n for n, p in spec["properties"].items() if not _resolve(schema, p).get("description")] == []
        with pytest.raises(PrefectHTTPStatusError) as refused:
            client.create_flow_run_from_deployment(deployment.id, parameters={"spec": bad})
        assert refused.value.response.status_code == 409


def test_ablation_form_describes_every_field_and_refuses_a_bad_spec(deployed_api: str) -> None:
    _check_spec_form("ablation/ablation", set(AblationSpec.model_fields),
                     {"arms": {"a": {}, "b": {}}, "baseline": "a", "seeds": 0})  # fmt: skip


def test_sweep_form_describes_every_field_and_refuses_a_bad_space(deployed_api: str) -> None:
    _check_spec_form("sweep/sweep", set(SweepSpec.model_fields), {"space": {"lr": {"kind": "float", "low": 0.1}},
                                                                    "trials": 0})  # fmt: skip


def test_checkpoint_event_triggers_evaluate_checkpoint(deployed_api: str) -> None:
    with get_client(sync_client=True) as client:
        deployment = client.read_deployment_by_name("evaluate-checkpoint/evaluate-checkpoint")
        automations = client.read_resource_related_automations(f"prefect.deployment.{deployment.id}")
    by_event = {
        event: automation
        for automation in automations
        if isinstance(automation.trigger, EventTrigger)
        for event in automation.trigger.expect
    }
    assert set(by_event) == {"pretrain.checkpoint.saved", "prefect.flow-run.Crashed"} and len(automations) == 2
    trigger = by_event["pretrain.checkpoint.saved"].trigger
    assert isinstance(trigger, EventTrigger) and isinstance(trigger.match, ResourceSpecification)
    assert trigger.match.model_dump() == {"prefect.resource.id": "pretrain.run.*"}
    (action,) = by_event["pretrain.checkpoint.saved"].actions
    assert action.model_dump()["parameters"] == {
        "checkpoint_url": "{{ event.payload.checkpoint_url }}",
        "step": "{{ event.payload.step }}",
    }
    # a crashed evaluation (its process killed) is run again for the same checkpoint (infra/stack/automations.py)
    (again,) = by_event["prefect.flow-run.Crashed"].actions
    assert again.model_dump()["parameters"] == {
        "checkpoint_url": "{{ flow_run.parameters['checkpoint_url'] }}",
        "step": "{{ flow_run.parameters['step'] }}",
    }


def test_server_refuses_a_train_run_outside_the_bounds(deployed_api: str) -> None:
    with get_client(sync_client=True) as client:
        deployment = client.read_deployment_by_name("train/train")
        with pytest.raises(PrefectHTTPStatusError) as refused:
            client.create_flow_run_from_deployment(deployment.id, parameters={"params": {"lr": -0.1}})
        assert refused.value.response.status_code == 409
        # Scheduled next year: no worker picks it up.
        next_year: State[None] = Scheduled(scheduled_time=datetime.now(UTC) + timedelta(days=365))
        accepted = client.create_flow_run_from_deployment(
            deployment.id, parameters={"params": {"lr": 0.01}}, state=next_year
        )
        assert accepted.parameters["params"] == {"lr": 0.01}
        assert accepted.state is not None and accepted.state.type == StateType.SCHEDULED


@pytest.mark.parametrize("name", ["cpu", "gpu"])
def test_server_accepts_the_kubernetes_job_templates(deployed_api: str, name: str) -> None:
    template = json.loads((REPO_ROOT / f"infra/k8s/pretrain-{name}-job-template.json").read_text(encoding="utf-8"))
    with get_client(sync_client=True) as client:
        pool = client.create_work_pool(
            WorkPoolCreate(name=f"pretrain-{name}-k8s", type="kubernetes", base_job_template=template)
        )
    assert pool.base_job_template == template


def test_down_requeues_the_checkpoint_evaluations_it_cancels(deployed_api: str) -> None:
    """A checkpoint is announced once: an evaluation that down.sh cancels gets a new scheduled run of the same
    deployment (it starts once up.sh resumes the pools); another flow's cancelled run is left to the operator."""
    lifecycle = stack_script("lifecycle")
    evaluation = {"checkpoint_url": "/runs/r/checkpoints/step-00000020", "step": 20}
    nightly = {"runs_root": "/runs-of-the-requeue-test"}
    with get_client(sync_client=True) as client:
        evaluate = client.read_deployment_by_name("evaluate-checkpoint/evaluate-checkpoint")
        in_flight = client.create_flow_run_from_deployment(evaluate.id, parameters=evaluation)
        other = client.create_flow_run_from_deployment(
            client.read_deployment_by_name("nightly-eval/nightly-eval").id, parameters=nightly
        )
        for run in (in_flight, other):
            client.set_flow_run_state(run.id, Running(), force=True)
        try:
            late = lifecycle.stop_runs(grace_s=3)  # no worker here to end them: they stay Cancelling
        finally:
            for pool in POOLS:
                client.update_work_pool(pool, WorkPoolUpdate(is_paused=False))
        assert sorted(late) == sorted([in_flight.name, other.name])
        scheduled = client.read_flow_runs(
            flow_run_filter=FlowRunFilter(
                state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.SCHEDULED]))
            ),
            limit=200,
        )
        requeued = [run for run in scheduled if run.parameters in (evaluation, nightly)]
        for run in (in_flight, other, *requeued):  # the other tests of this server count evaluation runs
            client.delete_flow_run(run.id)
    assert [(run.deployment_id, run.parameters) for run in requeued] == [(evaluate.id, evaluation)]
