#!/usr/bin/env bash
# Start a local Prefect stack for the pretrain flows: server (loopback), work pools, the `pretrain-gpu` global
# concurrency limit, the deployments of infra/prefect.yaml and one process worker per pool. Stop it with down.sh.
#
# Environment:
#   PRETRAIN_STACK_DIR   state, logs and pids (default: <repo>/.prefect-stack)
#   PRETRAIN_STACK_PORT  server port on 127.0.0.1 (default: 4200)
#   PREFECT_HOME         Prefect's home, holds the SQLite database (default: $PRETRAIN_STACK_DIR/home)
#   PREFECT_SERVER_DATABASE_CONNECTION_URL  postgresql+asyncpg://... to use Postgres instead of SQLite
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
STACK_DIR="${PRETRAIN_STACK_DIR:-$REPO_ROOT/.prefect-stack}"
PORT="${PRETRAIN_STACK_PORT:-4200}"
PIDS_FILE="$STACK_DIR/pids"

export PREFECT_HOME="${PREFECT_HOME:-$STACK_DIR/home}"
export PREFECT_SERVER_ANALYTICS_ENABLED=false
# Concurrency leases on disk, not in the server's memory: a restart must not forget which run holds the GPU slot
# (with the in-memory default, a slot held across a restart is never given back).
# Flow-run processes (started by the workers) send a heartbeat this often; a run silent for 90 s is set Crashed by
# the `crash-unresponsive-runs` automation (automations.py).
export PREFECT_FLOWS_HEARTBEAT_FREQUENCY="${PREFECT_FLOWS_HEARTBEAT_FREQUENCY:-30}"
export PREFECT_SERVER_CONCURRENCY_LEASE_STORAGE="${PREFECT_SERVER_CONCURRENCY_LEASE_STORAGE:-prefect.server.concurrency.lease_storage.filesystem}"
export PREFECT_API_URL="http://127.0.0.1:$PORT/api"

cd "$REPO_ROOT"
mkdir -p "$STACK_DIR" "$PREFECT_HOME"
# Every process of the stack inherits this id, also those in sessions of their own (flow runs, torchrun, ranks):
# down.sh finds them by it. Kept across restarts, so strays of an earlier start are found too.
[[ -s "$STACK_DIR/stack-id" ]] || python -c 'import uuid; print(uuid.uuid4().hex)' >"$STACK_DIR/stack-id"
export PRETRAIN_STACK_ID="$(cat "$STACK_DIR/stack-id")"

if [[ -s "$PIDS_FILE" ]]; then
    echo "a stack is already recorded in $PIDS_FILE: run infra/stack/down.sh first" >&2
    exit 1
fi

# Each process gets its own session so down.sh can stop it with everything it started (flow runs included).
start() {
    local name="$1"
    shift
    setsid "$@" >"$STACK_DIR/$name.log" 2>&1 < /dev/null &
    echo "$name $!" >>"$PIDS_FILE"
}

start server prefect server start --host 127.0.0.1 --port "$PORT"

for _ in $(seq 1 120); do
    curl -fsS "$PREFECT_API_URL/health" >/dev/null 2>&1 && break
    sleep 0.5
done
if ! curl -fsS "$PREFECT_API_URL/health" >/dev/null 2>&1; then
    echo "server not healthy after 60 s; see $STACK_DIR/server.log" >&2
    "$REPO_ROOT/infra/stack/down.sh"
    exit 1
fi

# Runs the server still holds as in flight whose process died with an earlier stack: Crashed now, not never (first
# thing once the server answers; the crash automation would only notice their silent heartbeats 90 s later).
python infra/stack/lifecycle.py reconcile

for pool in pretrain-cpu pretrain-gpu; do
    prefect work-pool inspect "$pool" >/dev/null 2>&1 || prefect work-pool create "$pool" --type process
    prefect work-pool resume "$pool" >/dev/null  # down.sh pauses them while it stops the runs in flight
done
prefect gcl inspect pretrain-gpu >/dev/null 2>&1 || prefect gcl create pretrain-gpu --limit 1

prefect --no-prompt deploy --all --prefect-file infra/prefect.yaml
python infra/stack/automations.py --within 90

for pool in pretrain-cpu pretrain-gpu; do
    start "worker-$pool" prefect worker start --pool "$pool" --type process
done

echo "Prefect UI: http://127.0.0.1:$PORT  (clients: PREFECT_API_URL=$PREFECT_API_URL)"
echo "logs and pids: $STACK_DIR"
