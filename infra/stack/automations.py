"""Create (or update) the stack's automations; infra/stack/up.sh runs this once the server is up.

`crash-unresponsive-runs`: a flow run whose process died without a word (SIGKILL, the OOM killer, a lost node)
would stay `Running` forever. Flow-run processes send a heartbeat event every PREFECT_FLOWS_HEARTBEAT_FREQUENCY
seconds (up.sh sets 30); a run that misses them for `--within` seconds without reaching a final state is set to
`Crashed`, so the UI tells the truth and a Retry resumes it. Its accelerator slot comes back on its own when its
lease runs out (tasks/slots.py).
"""

from __future__ import annotations

import argparse
from datetime import timedelta

from prefect.automations import Automation
from prefect.client.schemas.objects import StateType
from prefect.events.actions import ChangeFlowRunState
from prefect.events.schemas.automations import EventTrigger, Posture
from prefect.events.schemas.events import ResourceSpecification

CRASH_UNRESPONSIVE = "crash-unresponsive-runs"
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--within", type=int, default=90, help="seconds without a heartbeat before Crashed (90)")
    args = parser.parse_args()
    wanted = crash_unresponsive_runs(args.within)
    try:
        existing = Automation.read(name=CRASH_UNRESPONSIVE)
    except ValueError:
        wanted.create()
        print(f"created automation {CRASH_UNRESPONSIVE}")
        return
    wanted.id = existing.id
    wanted.update()
    print(f"updated automation {CRASH_UNRESPONSIVE}")


if __name__ == "__main__":
    main()
