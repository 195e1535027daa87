"""Chaos run against the live local stack (infra/stack/up.sh): training runs launched from the `train` deployment,
with faults injected at moments drawn from a seed, and the stack's invariants checked after every fault.

Faults: SIGKILL or SIGTERM of a training flow-run engine, SIGKILL of torchrun, of one rank, of a running
evaluate-checkpoint run, of the training pool's worker (started again as a supervisor would), and a restart of the
whole stack (down.sh, up.sh). After each fault the faulted run is
resumed as an operator would (a new run from the deployment, same run name: it resumes from its newest checkpoint)
until it completes.

Invariants, after each fault once the stack settles and again at the end:
  final-states     every flow run that is not running is Completed, Failed, Crashed or Cancelled (none stuck)
  slot-free        the `pretrain-gpu` slot is free when no training runs
  no-orphans       no training process of a run that has ended
  evaluated-once   (end) every checkpoint saved is evaluated exactly once: one record, one set of result rows
  bounded-disk     (end) at most keep_last_checkpoints checkpoints left on disk per run
  same-losses      (end) each completed run's per-step training losses equal an uninterrupted run's, bit for bit

    python infra/stack/chaos.py --faults 30 --seed 1 --tokens-url T --tokenizer-url M --output-root DIR
    python infra/stack/chaos.py --check-only --tokens-url T --tokenizer-url M --output-root DIR  # the end checks again

It needs PREFECT_API_URL of the stack and PRETRAIN_STACK_DIR/PRETRAIN_STACK_PORT as up.sh had them; it prints a
table of faults by kind, invariants held and recovery seconds, and writes it to DIR/chaos-report.json.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import signal
import subprocess
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar
from uuid import UUID

import psutil
import pyarrow.parquet as pq
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterState, FlowRunFilterStateType
from prefect.client.schemas.objects import TERMINAL_STATES, FlowRun, StateType
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from pretrain_core.train.checkpoint.catalog import EVALUATIONS, completed_checkpoints

STACK = Path(__file__).resolve().parent
FAULTS = (
    "kill-engine", "term-engine", "kill-torchrun", "kill-rank", "kill-evaluation", "kill-worker", "restart-stack",
)  # fmt: skip
INVARIANTS = ("final-states", "slot-free", "no-orphans", "evaluated-once", "bounded-disk", "same-losses")
T = TypeVar("T")


def wait_for(probe: Callable[[], T | None], timeout_s: float, what: str) -> T:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if found := probe():
            return found
        time.sleep(1)
    raise TimeoutError(f"{what}: not within {timeout_s:g} s")


def training_processes(output_url: str | None = None) -> list[psutil.Process]:
    """torchrun and its ranks (of one run's output, or of any run)."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        cmdline = " ".join(process.info["cmdline"] or [])
        if "pretrain_core.train" in cmdline and (output_url is None or output_url in cmdline):
            found.append(process)
    return found


def engine_of(output_url: str) -> psutil.Process | None:
    """The flow-run process training ``output_url``: torchrun's parent."""
    for process in training_processes(output_url):
        if "torch.distributed.run" in " ".join(process.cmdline()):
            return process.parent()
    return None


def evaluation_engine() -> psutil.Process | None:
    """A running evaluate-checkpoint flow-run process (its run's parameters name a checkpoint)."""
    for process in psutil.process_iter():
        try:
            run_id = process.environ().get("PREFECT__FLOW_RUN_ID")
        except psutil.Error:
            continue
        if run_id and "prefect.engine" in " ".join(process.cmdline()):
            with get_client(sync_client=True) as client:
                if "checkpoint_url" in client.read_flow_run(UUID(run_id)).parameters:
                    return process
    return None


def restart_worker(pool: str) -> None:
    """SIGKILL the pool's worker, then start it again as it was (command, environment, folder, log), as a process
    supervisor would: the runs it started live on in sessions of their own and report to the API themselves."""
    worker = next(
        p for p in psutil.process_iter(["cmdline"]) if {"worker", "start", pool} <= set(p.info["cmdline"] or [])
    )
    command, environment, folder = worker.cmdline(), worker.environ(), worker.cwd()
    log = os.readlink(f"/proc/{worker.pid}/fd/1")  # where up.sh sent its output
    worker.kill()
    worker.wait(30)
    with open(log, "ab") as output:
        subprocess.Popen(command, env=environment, cwd=folder, stdout=output, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL, start_new_session=True)  # fmt: skip


class Chaos:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.rng = random.Random(args.seed)
        self.root = Path(args.output_root)
        self.faults: Counter[str] = Counter()
        self.held: Counter[str] = Counter()
        self.broken: list[str] = []
        self.recovery: dict[str, list[float]] = defaultdict(list)

    def params(self, run_name: str) -> dict[str, Any]:
        return {
            "run_name": run_name, "model": "tiny", "max_steps": self.args.steps, "seq_len": self.args.seq_len,
            "micro_batch_size": 4, "warmup_steps": 5, "checkpoint_every": self.args.checkpoint_every,
            "keep_last_checkpoints": 2, "num_threads": 1, "tokens_url": self.args.tokens_url,
            "tokenizer_url": self.args.tokenizer_url, "output_root": str(self.root),
        }  # fmt: skip

    def launch(self, run_name: str) -> UUID:
        with get_client(sync_client=True) as client:
            deployment = client.read_deployment_by_name("train/train")
            return client.create_flow_run_from_deployment(
                deployment.id, parameters={"params": self.params(run_name)}
            ).id

    def final(self, flow_run_id: UUID, timeout_s: float = 600) -> FlowRun:
        def probe() -> FlowRun | None:
            with get_client(sync_client=True) as client:
                run = client.read_flow_run(flow_run_id)
            return run if run.state is not None and run.state.is_final() else None

        return wait_for(probe, timeout_s, f"flow run {flow_run_id} in a final state")

    def train_to_completion(self, run_name: str, faults: int) -> int:
        """Launch, inject up to ``faults`` faults (one per attempt), resume until the run completes; returns the
        faults injected (fewer when an attempt completes first)."""
        budget = faults
        output = str(self.root / run_name)
        while True:
            flow_run_id = self.launch(run_name)
            if faults <= 0:
                if self.completed(flow_run_id):
                    return budget - faults
                continue  # a fault of an earlier attempt may still be settling: try again
            attempt: Callable[[], str | None] = functools.partial(self.training_or_final, flow_run_id, output)
            if wait_for(attempt, 300, f"{run_name} started") == "final":
                if self.completed(flow_run_id):
                    return budget - faults  # resumed so near the end that it finished before a fault could land
                continue
            time.sleep(self.rng.uniform(2, self.args.max_delay))
            kind = self.rng.choice(FAULTS if evaluation_engine() else [f for f in FAULTS if f != "kill-evaluation"])
            injected_at = time.monotonic()
            self.inject(kind, output)
            self.faults[kind] += 1
            faults -= 1
            self.settle(flow_run_id, output)
            self.recovery[kind].append(time.monotonic() - injected_at)
            self.check_settled(f"{kind} on {run_name}")
            if self.completed(flow_run_id):
                return budget - faults

    def training_or_final(self, flow_run_id: UUID, output: str) -> str | None:
        if engine_of(output):
            return "training"
        with get_client(sync_client=True) as client:
            state = client.read_flow_run(flow_run_id).state
        return "final" if state is not None and state.is_final() else None

    def completed(self, flow_run_id: UUID) -> bool:
        state = self.final(flow_run_id).state
        return state is not None and state.type == StateType.COMPLETED

    def inject(self, kind: str, output: str) -> None:
        print(f"fault: {kind} ({output})", flush=True)
        if kind in ("kill-engine", "term-engine"):
            if engine := engine_of(output):
                engine.send_signal(signal.SIGKILL if kind == "kill-engine" else signal.SIGTERM)
        elif kind == "kill-torchrun":
            for process in training_processes(output):
                if "torch.distributed.run" in " ".join(process.cmdline()):
                    process.kill()
        elif kind == "kill-rank":
            ranks = [p for p in training_processes(output) if "torch.distributed.run" not in " ".join(p.cmdline())]
            if ranks:
                self.rng.choice(ranks).kill()
        elif kind == "kill-worker":
            restart_worker("pretrain-gpu")
        elif kind == "kill-evaluation":
            if engine := evaluation_engine():  # drawn only while one runs; it may have ended since
                engine.kill()
        else:
            self.script("down.sh")
            self.script("up.sh")

    def script(self, name: str) -> None:
        subprocess.run([str(STACK / name)], check=True, timeout=600, capture_output=True)

    def settle(self, flow_run_id: UUID, output: str) -> None:
        """Wait until the faulted attempt has ended, its processes are gone and the slot is free."""
        self.final(flow_run_id)
        wait_for(lambda: not training_processes(output) or None, 120, "training processes gone")
        wait_for(lambda: self.slot_free() or None, 180, "the GPU slot free")

    def slot_free(self) -> bool:
        with get_client(sync_client=True) as client:
            return client.read_global_concurrency_limit_by_name("pretrain-gpu").active_slots == 0

    def check(self, name: str, held: bool, where: str) -> None:
        if held:
            self.held[name] += 1
        else:
            self.broken.append(f"{name} after {where}")
            print(f"BROKEN: {name} after {where}", flush=True)

    def check_settled(self, where: str) -> None:
        with get_client(sync_client=True) as client:
            runs = client.read_flow_runs(flow_run_filter=FlowRunFilter(), limit=200)
        train_runs = [r for r in runs if r.parameters.get("params")]
        stuck = [r.name for r in train_runs if r.state is not None and not r.state.is_final()]
        self.check("final-states", not stuck, where)
        self.check("slot-free", self.slot_free(), where)
        self.check("no-orphans", not training_processes(str(self.root)), where)

    def check_end(self, run_names: list[str], reference: str) -> None:
        self.check_settled("the last run")
        wait_for(lambda: self.evaluations_settled(run_names) or None, self.args.evaluation_wait,
                 "every checkpoint evaluated and every evaluate-checkpoint run ended")  # fmt: skip
        results = pq.read_table(self.root / "eval_results.parquet").to_pylist()
        rows = Counter((r["run"], r["step"], r["split"], r["domain"]) for r in results)
        for name in run_names:
            run_dir = self.root / name
            records = list((run_dir / EVALUATIONS).glob("step-*.json"))
            steps = {int(p.name.split("-")[1].split(".")[0]) for p in records}
            once = all(count == 1 for key, count in rows.items() if key[0] == name)
            self.check("evaluated-once", once and {key[1] for key in rows if key[0] == name} == steps, name)
            self.check("bounded-disk", len(completed_checkpoints(str(run_dir))) <= 2, name)
            self.check("same-losses", losses(run_dir) == losses(self.root / reference), name)

    def evaluations_settled(self, run_names: list[str]) -> bool:
        """Every complete checkpoint has its evaluation record, and then no evaluate-checkpoint run is queued or
        running: a run appends its rows after it writes the record, so the rows are read once the writers ended."""
        for name in run_names:
            run_dir = self.root / name
            if any(not (run_dir / EVALUATIONS / f"step-{step:08d}.json").exists()
                   for step, _ in completed_checkpoints(str(run_dir))):  # fmt: skip
                return False
        ongoing = FlowRunFilter(state=FlowRunFilterState(type=FlowRunFilterStateType(not_any_=sorted(TERMINAL_STATES))))
        with get_client(sync_client=True) as client:
            return not any("checkpoint_url" in r.parameters for r in client.read_flow_runs(flow_run_filter=ongoing))

    def report(self) -> dict[str, Any]:
        return {
            "seed": self.args.seed,
            "faults": dict(self.faults),
            "invariants_held": {name: self.held[name] for name in INVARIANTS},
            "invariants_broken": self.broken,
            "recovery_s": {kind: round(max(times), 1) for kind, times in self.recovery.items()},
        }


def losses(run_dir: Path) -> dict[int, float]:
    """Training loss by step from the run's TensorBoard logs (a resumed attempt's purge applied)."""
    events = EventAccumulator(str(run_dir / "tensorboard"), size_guidance={"scalars": 0})
    events.Reload()
    return {event.step: event.value for event in events.Scalars("train/loss")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--faults", type=int, default=30, help="faults to inject in all (30)")
    parser.add_argument("--faults-per-run", type=int, default=5, help="faults before a run may complete (5)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=300, help="training steps of each run (300)")
    parser.add_argument("--checkpoint-every", type=int, default=20)
    parser.add_argument("--seq-len", type=int, default=64)
    parser.add_argument("--max-delay", type=float, default=20.0, help="latest fault, seconds into an attempt (20)")
    parser.add_argument(
        "--evaluation-wait", type=float, default=3600.0, help="seconds the end waits for the evaluation queue (3600)"
    )
    parser.add_argument("--tokens-url", required=True)
    parser.add_argument("--tokenizer-url", required=True)
    parser.add_argument("--output-root", required=True)
    parser.add_argument(
        "--check-only", action="store_true", help="inject nothing: run the end checks on the runs under --output-root"
    )
    args = parser.parse_args(argv)
    chaos = Chaos(args)
    if args.check_only:
        names = sorted(
            p.name for p in Path(args.output_root).glob("chaos-*") if p.is_dir() and p.name != "chaos-reference"
        )
    else:
        chaos.train_to_completion("chaos-reference", faults=0)
        names = []
        left = args.faults
        while left > 0:
            name = f"chaos-{len(names)}"
            left -= chaos.train_to_completion(name, faults=min(left, args.faults_per_run))
            names.append(name)
    chaos.check_end(names, "chaos-reference")
    report = chaos.report()
    (Path(args.output_root) / "chaos-report.json").write_text(json.dumps(report, indent=2) + "\n")
    print_table(report)
    return 1 if report["invariants_broken"] else 0


def print_table(report: dict[str, Any]) -> None:
    print(f"\n{'fault':<18} {'injected':>8} {'worst recovery s':>17}")
    for kind in FAULTS:
        print(f"{kind:<18} {report['faults'].get(kind, 0):>8} {report['recovery_s'].get(kind, '-'):>17}")
    print(f"\n{'invariant':<18} {'checks held':>11}")
    for name, held in report["invariants_held"].items():
        print(f"{name:<18} {held:>11}")
    print(f"\nbroken: {len(report['invariants_broken'])}" + "".join(f"\n  {b}" for b in report["invariants_broken"]))


if __name__ == "__main__":
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    raise SystemExit(main())
