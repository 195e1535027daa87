#!/usr/bin/env bash
# Stop what up.sh started: SIGTERM to each recorded process group (workers first, then the server), SIGKILL to
# whatever is left after a grace period. The database under PREFECT_HOME is kept.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
STACK_DIR="${PRETRAIN_STACK_DIR:-$REPO_ROOT/.prefect-stack}"
PIDS_FILE="$STACK_DIR/pids"
GRACE_S="${PRETRAIN_STACK_GRACE_S:-20}"

if [[ ! -f "$PIDS_FILE" ]]; then
    echo "no stack recorded in $PIDS_FILE"
    exit 0
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
