#!/usr/bin/env bash
# Stop what up.sh started, leaving no run or process behind: cancel the runs in flight through the API and wait
# for them (training takes its SIGTERM checkpoint), then SIGTERM every process carrying the stack's id (workers,
# flow-run engines, torchrun and its ranks, whatever session they run in) and SIGKILL what is left after the grace
# period, the server last. The database under PREFECT_HOME is kept.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
STACK_DIR="${PRETRAIN_STACK_DIR:-$REPO_ROOT/.prefect-stack}"
PIDS_FILE="$STACK_DIR/pids"
GRACE_S="${PRETRAIN_STACK_GRACE_S:-30}"
PORT="${PRETRAIN_STACK_PORT:-4200}"
export PREFECT_API_URL="http://127.0.0.1:$PORT/api"

if [[ ! -f "$PIDS_FILE" ]]; then
    echo "no stack recorded in $PIDS_FILE"
    exit 0
fi
export PRETRAIN_STACK_ID="$(cat "$STACK_DIR/stack-id" 2>/dev/null || true)"
server_pid="$(awk '$1 == "server" {print $2}' "$PIDS_FILE")"

cd "$REPO_ROOT"
if curl -fsS "$PREFECT_API_URL/health" >/dev/null 2>&1; then
    python infra/stack/lifecycle.py stop --grace "$GRACE_S" || true
fi
if [[ -n "$PRETRAIN_STACK_ID" ]]; then
    python infra/stack/lifecycle.py kill --grace "$GRACE_S" ${server_pid:+--keep "$server_pid"} || true
fi

mapfile -t pids < <(tac "$PIDS_FILE" | awk '{print $2}')
for pid in "${pids[@]}"; do
    kill -TERM -- "-$pid" 2>/dev/null || true
done

deadline=$((SECONDS + GRACE_S))
for pid in "${pids[@]}"; do
    while kill -0 -- "-$pid" 2>/dev/null && ((SECONDS < deadline)); do
        sleep 0.5
    done
    kill -KILL -- "-$pid" 2>/dev/null || true
done

rm -f "$PIDS_FILE"
echo "stack stopped"
