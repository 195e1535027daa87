#!/usr/bin/env bash
# Start a Dask cluster for the data stages on plain hosts (one scheduler, N workers per host).
#
#   SCHEDULER_HOST   host running the scheduler (this host when unset)
#   WORKERS          worker processes on this host (default: number of cores)
#   ROLE             scheduler | worker
#
# Then point the pipeline at it:  pretrain corpus --set execution.dask_address=tcp://$SCHEDULER_HOST:8786
# Every worker needs the package installed (same version) and access to storage.root (S3 credentials in env).
set -euo pipefail
SCHEDULER_HOST=${SCHEDULER_HOST:-$(hostname)}
WORKERS=${WORKERS:-$(nproc)}
case "${ROLE:-worker}" in
  scheduler) exec dask scheduler --host 0.0.0.0 --port 8786 --dashboard-address :8787 ;;
  worker) exec dask worker "tcp://${SCHEDULER_HOST}:8786" --nworkers "$WORKERS" --nthreads 1 --memory-limit auto ;;
  *) echo "ROLE must be scheduler or worker" >&2; exit 2 ;;
esac
