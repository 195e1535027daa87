#!/usr/bin/env bash
# Container entrypoint for multi-node training on Kubernetes: run it in every pod of an Indexed Job
# (completions = parallelism = NNODES) behind a headless Service, so pod 0 is reachable as
# <job>-0.<service>. torchrun becomes PID 1 and forwards the SIGTERM of a pod deletion to the workers, which
# checkpoint and exit; set terminationGracePeriodSeconds above the checkpoint time. A restarted pod or
# resubmitted Job resumes from the latest checkpoint under the config's output_url (use s3:// or a shared PVC).
#
# Environment:
#   CONFIG          (required) train config YAML/JSON path or URL, e.g. mounted from a ConfigMap
#   RDZV_ENDPOINT   (required) host:port of the rendezvous, e.g. pretrain-0.pretrain:29400
#   NNODES          pods in the job, or MIN:MAX for elastic membership (default: 1)
#   NPROC_PER_NODE  worker processes per pod, usually the GPUs requested (default: 1)
#   RDZV_ID         id shared by all pods (default: JOB_NAME, else "pretrain")
#   MAX_RESTARTS    times torchrun restarts the workers after a failure (default: 3)
# Arguments are passed on to `python -m pretrain_core.train` and override config fields.
set -euo pipefail

: "${CONFIG:?set CONFIG to the train config}"
: "${RDZV_ENDPOINT:?set RDZV_ENDPOINT to host:port of pod 0}"

exec python -m torch.distributed.run \
    --nnodes="${NNODES:-1}" \
    --nproc-per-node="${NPROC_PER_NODE:-1}" \
    --rdzv-backend=c10d \
    --rdzv-endpoint="$RDZV_ENDPOINT" \
    --rdzv-id="${RDZV_ID:-${JOB_NAME:-pretrain}}" \
    --max-restarts="${MAX_RESTARTS:-3}" \
    -m pretrain_core.train --config "$CONFIG" "$@"
