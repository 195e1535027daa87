#!/usr/bin/env bash
# Screenshot the Prefect UI's run form of a deployment with headless Chromium (Debian's `chromium` package), e.g.
#   infra/stack/up.sh && scripts/screenshot_run_form.sh train/train docs/img/train-run-form.png
# Environment: PRETRAIN_STACK_PORT (default 4200) names the local UI; the API is served under /api on it.
set -euo pipefail

if [[ $# -ne 2 || "$1" == -h || "$1" == --help ]]; then
    echo "usage: $0 FLOW/DEPLOYMENT OUTPUT.png   (with a stack from infra/stack/up.sh running)" >&2
    exit 2
fi
DEPLOYMENT="$1"
OUTPUT="$2"
UI="http://127.0.0.1:${PRETRAIN_STACK_PORT:-4200}"

deployment_id="$(curl -fsS "$UI/api/deployments/name/$DEPLOYMENT" | python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')"
mkdir -p "$(dirname "$OUTPUT")"
# The UI is a single-page app: the virtual time budget lets it fetch the deployment and render the form.
chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars \
    --window-size=1400,2400 --virtual-time-budget=20000 --screenshot="$OUTPUT" \
    "$UI/deployments/deployment/$deployment_id/run" 2>/dev/null
echo "$UI/deployments/deployment/$deployment_id/run -> $OUTPUT"
