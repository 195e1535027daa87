"""Create (or update) the stack's automations; infra/stack/up.sh runs this once the server is up and deployed.

`crash-unresponsive-runs`: a flow run whose process died without a word (SIGKILL, the OOM killer, a lost node)
would stay `Running` forever. Flow-run processes send a heartbeat event every PREFECT_FLOWS_HEARTBEAT_FREQUENCY
seconds (up.sh sets 30); a run that misses them for `--within` seconds without reaching a final state is set to
`Crashed`, so the UI tells the truth and a Retry resumes it. Its accelerator slot comes back on its own when its
lease runs out (tasks/slots.py).

`reevaluate-crashed-evaluations`: an `evaluate-checkpoint` run whose process died leaves its checkpoint without an
evaluation, and nothing would ask again (the checkpoint was announced once); the automation runs the deployment
again for that checkpoint. A failed evaluation (an exception) is recorded with its reason and not retried.
"""

from __future__ import annotations

import argparse
from datetime import timedelta

from prefect.automations import Automation
from prefect.client.orchestration import get_client
from prefect.client.schemas.objects import StateType
from prefect.events.actions import ChangeFlowRunState, RunDeployment
from prefect.events.schemas.automations import EventTrigger, Posture
from prefect.events.schemas.events import ResourceSpecification

CRASH_UNRESPONSIVE = "crash-unresponsive-runs"
REEVALUATE_CRASHED = "reevaluate-crashed-evaluations"
EVALUATE_DEPLOYMENT = "evaluate-checkpoint/evaluate-checkpoint"
FINAL_EVENTS = {f"prefect.flow-run.{state}" for state in ("Completed", "Failed", "Cancelled", "Crashed")}


def crash_unresponsive_runs(within_s: int) -> Automation:
    return Automation(
        name=CRASH_UNRESPONSIVE,
        description=f"Mark a flow run Crashed when it sends no heartbeat for {within_s} s before a final state.",
        trigger=EventTrigger(
            after={"prefect.flow-run.heartbeat"},
            expect={"prefect.flow-run.heartbeat", *FINAL_EVENTS},
            match=ResourceSpecification({"prefect.resource.id": ["prefect.flow-run.*"]}),
            for_each={"prefect.resource.id"},
            posture=Posture.Proactive,
            threshold=1,
            within=timedelta(seconds=within_s),
        ),
        actions=[
            ChangeFlowRunState(
                state=StateType.CRASHED,
                message=f"no heartbeat for {within_s} s: the flow-run process died (killed, out of memory, node lost)",
            )
        ],
    )


def reevaluate_crashed_evaluations() -> Automation:
    with get_client(sync_client=True) as client:
        deployment = client.read_deployment_by_name(EVALUATE_DEPLOYMENT)
    return Automation(
        name=REEVALUATE_CRASHED,
        description="Run evaluate-checkpoint again for the checkpoint of an evaluate-checkpoint run that crashed.",
        trigger=EventTrigger(
            expect={"prefect.flow-run.Crashed"},
            match_related=ResourceSpecification(
                {"prefect.resource.role": "deployment", "prefect.resource.id": f"prefect.deployment.{deployment.id}"}
            ),
            posture=Posture.Reactive,
            threshold=1,
            within=timedelta(0),
        ),
        actions=[
            RunDeployment(
                source="selected",
                deployment_id=deployment.id,
                parameters={
                    "checkpoint_url": "{{ flow_run.parameters['checkpoint_url'] }}",
                    "step": "{{ flow_run.parameters['step'] }}",
                },
            )
        ],
    )


def create_or_update(wanted: Automation) -> None:
    try:
        existing = Automation.read(name=wanted.name)
    except ValueError:
        wanted.create()
        print(f"created automation {wanted.name}")
        return
    wanted.id = existing.id
    wanted.update()
    print(f"updated automation {wanted.name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--within", type=int, default=90, help="seconds without a heartbeat before Crashed (90)")
    args = parser.parse_args()
    create_or_update(crash_unresponsive_runs(args.within))
    create_or_update(reevaluate_crashed_evaluations())


if __name__ == "__main__":
    main()
