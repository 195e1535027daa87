"""Stop and restart the local stack without leaving runs or processes behind; down.sh and up.sh call it.

up.sh gives every process it starts PRETRAIN_STACK_ID, and they pass it on: flow-run engines, torchrun and its
ranks run in sessions of their own, out of reach of a process-group kill, but not of this variable.

  stop       cancel every flow run in flight through the API (training takes its SIGTERM checkpoint) and wait for
             each to reach a final state, up to the grace period
  kill       SIGTERM every process of the stack but this one, SIGKILL whatever is left after the grace period
  reconcile  after a restart: mark Crashed every run the API holds as in flight whose process is gone (the
             crash automation only sees heartbeats that stop while the server runs)
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Iterable
from uuid import UUID

import psutil
from prefect.client.orchestration import get_client
from prefect.client.schemas.actions import WorkPoolUpdate
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterState, FlowRunFilterStateType
from prefect.client.schemas.objects import FlowRun, StateType
from prefect.states import Cancelling, Crashed

STACK_ID = "PRETRAIN_STACK_ID"
EVALUATION_PARAMETER = "checkpoint_url"  # what marks an evaluate-checkpoint run
IN_FLIGHT = [StateType.RUNNING, StateType.PENDING, StateType.CANCELLING]


def in_flight_runs() -> list[FlowRun]:
    state = FlowRunFilterState(type=FlowRunFilterStateType(any_=IN_FLIGHT))
    with get_client(sync_client=True) as client:
        return client.read_flow_runs(flow_run_filter=FlowRunFilter(state=state), limit=200)


def stop_runs(grace_s: float) -> list[str]:
    """Pause the work pools (no run starts any more; up.sh resumes them), cancel every run in flight and wait for
    them to end; returns the names of those that did not in time. Scheduled runs stay scheduled: the evaluation of
    a checkpoint saved on the way down runs after the restart, and so does a new run for each evaluation this
    cancelled (its checkpoint was announced once; nothing else would ask again)."""
    with get_client(sync_client=True) as client:
        for pool in client.read_work_pools():
            client.update_work_pool(pool.name, WorkPoolUpdate(is_paused=True))
    cancelled: dict[UUID, FlowRun] = {}
    deadline = time.monotonic() + grace_s
    while (runs := in_flight_runs()) and time.monotonic() < deadline:
        with get_client(sync_client=True) as client:
            for run in runs:
                if run.state_type != StateType.CANCELLING:
                    message = "the stack is stopping (down.sh)"
                    client.set_flow_run_state(run.id, Cancelling(message=message), force=True)
                    cancelled[run.id] = run
        time.sleep(1)
    requeue_evaluations(list(cancelled.values()))
    return sorted(run.name for run in in_flight_runs())


def requeue_evaluations(cancelled: list[FlowRun]) -> list[UUID]:
    """A new scheduled run of the same deployment for each checkpoint evaluation among ``cancelled``."""
    queued = []
    with get_client(sync_client=True) as client:
        for run in cancelled:
            if run.deployment_id is not None and EVALUATION_PARAMETER in run.parameters:
                new_run = client.create_flow_run_from_deployment(
                    run.deployment_id, parameters=run.parameters, tags=run.tags
                )
                queued.append(new_run.id)
    return queued


def stack_processes(stack_id: str, exclude: Iterable[int] = ()) -> list[psutil.Process]:
    """Every live process that carries this stack's id, whatever session it started."""
    skip = {os.getpid(), *exclude}
    found = []
    for process in psutil.process_iter():
        try:
            if process.pid not in skip and process.environ().get(STACK_ID) == stack_id:
                found.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


def kill_stack(stack_id: str, grace_s: float, keep: Iterable[int] = ()) -> int:
    """SIGTERM every process of the stack but ``keep`` (the server: engines report their end to it), SIGKILL
    those alive after ``grace_s``; returns how many were found."""
    kept = {child.pid for pid in keep if psutil.pid_exists(pid) for child in psutil.Process(pid).children(True)}
    processes = stack_processes(stack_id, exclude={*keep, *kept})
    for process in processes:
        try:
            process.terminate()
        except psutil.NoSuchProcess:
            continue
    _, alive = psutil.wait_procs(processes, timeout=grace_s)
    for process in alive:
        try:
            process.kill()
        except psutil.NoSuchProcess:
            continue
    psutil.wait_procs(alive, timeout=5)
    return len(processes)


def reconcile(stack_id: str) -> list[str]:
    """Mark Crashed every run in flight whose flow-run process is gone; returns their names."""
    crashed = []
    with get_client(sync_client=True) as client:
        for run in in_flight_runs():
            if _process_alive(run.infrastructure_pid, stack_id):
                continue
            message = "its process is gone: the stack stopped or restarted while it ran (resume it with Retry)"
            client.set_flow_run_state(run.id, Crashed(message=message), force=True)
            crashed.append(run.name)
    return crashed


def _process_alive(infrastructure_pid: str | None, stack_id: str) -> bool:
    """Whether the run's process still runs as part of this stack (a pid reused by another process does not)."""
    if not infrastructure_pid:
        return False
    pid = infrastructure_pid.rsplit(":", 1)[-1]
    if not pid.isdigit():
        return False
    try:
        return psutil.Process(int(pid)).environ().get(STACK_ID) == stack_id
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("stop", "kill", "reconcile"))
    parser.add_argument("--grace", type=float, default=20.0, help="seconds to wait before giving up or SIGKILL")
    parser.add_argument("--keep", type=int, action="append", default=[], help="kill: a pid (and its children) to spare")
    args = parser.parse_args(argv)
    stack_id = os.environ.get(STACK_ID, "")
    if args.action == "stop":
        late = stop_runs(args.grace)
        print(f"runs still in flight after {args.grace:g} s: {', '.join(late)}" if late else "no run in flight")
    elif not stack_id:
        parser.error(f"{STACK_ID} is not set: run it from up.sh or down.sh")
    elif args.action == "kill":
        print(f"stopped {kill_stack(stack_id, args.grace, args.keep)} processes of the stack")
    else:
        crashed = reconcile(stack_id)
        print(f"marked Crashed (process gone): {', '.join(crashed)}" if crashed else "no run lost its process")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
