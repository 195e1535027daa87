#!/usr/bin/env bash
# Start a Dask cluster for the data stages on plain hosts (one scheduler, N workers per host), closed by default:
# bound to loopback or the private address you give, speaking mutual TLS. A Dask scheduler runs whatever a
# connected client sends it on every worker, with the workers' storage credentials: see docs/infra.md.
#
#   ROLE            scheduler | worker
#   BIND            address this host listens on (default 127.0.0.1: this machine only); for several hosts, this
#                   host's address on a private network. Never a public interface.
#   SCHEDULER_HOST  where workers find the scheduler (default: BIND)
#   PORT            scheduler port (default 8786); its dashboard listens on BIND:DASHBOARD_PORT (default 8787,
#                   plain HTTP: reach it through an SSH tunnel)
#   WORKERS         worker processes on this host (default: number of cores)
#   TLS_DIR         ca.pem, cert.pem and key.pem from `pretrain dask-certs --output DIR` (default ./dask-tls)
#   INSECURE=1      the opt-out: plain TCP, no certificates. Only where nobody else can reach BIND.
#
# Then point the pipeline at it:
#   pretrain corpus --set execution.dask_address=tls://$BIND:8786 --set execution.dask_tls.ca_file=$TLS_DIR/ca.pem \
#     --set execution.dask_tls.cert_file=$TLS_DIR/cert.pem --set execution.dask_tls.key_file=$TLS_DIR/key.pem
# Every worker needs the package installed (same version) and access to storage.root (S3 credentials in env).
set -euo pipefail
BIND=${BIND:-127.0.0.1}
SCHEDULER_HOST=${SCHEDULER_HOST:-$BIND}
PORT=${PORT:-8786}
DASHBOARD_PORT=${DASHBOARD_PORT:-8787}
WORKERS=${WORKERS:-$(nproc)}
TLS_DIR=${TLS_DIR:-./dask-tls}

if [ "${INSECURE:-0}" = 1 ]; then
  echo "start-cluster: INSECURE=1: plain TCP on $BIND, no certificates; anyone who reaches it runs code here" >&2
  protocol=tcp
  tls=()
else
  for file in ca.pem cert.pem key.pem; do
    if [ ! -r "$TLS_DIR/$file" ]; then
      echo "start-cluster: no $TLS_DIR/$file: make the files with 'pretrain dask-certs --output $TLS_DIR' (or set TLS_DIR)" >&2
      exit 2
    fi
  done
  protocol=tls
  tls=(--tls-ca-file "$TLS_DIR/ca.pem" --tls-cert "$TLS_DIR/cert.pem" --tls-key "$TLS_DIR/key.pem")
fi

case "${ROLE:-worker}" in
  scheduler)
    exec dask scheduler --protocol "$protocol" --host "$BIND" --port "$PORT" \
      --dashboard-address "$BIND:$DASHBOARD_PORT" "${tls[@]}" ;;
  worker)
    exec dask worker "$protocol://$SCHEDULER_HOST:$PORT" --protocol "$protocol" --host "$BIND" \
      --dashboard-address "$BIND:0" --nworkers "$WORKERS" --nthreads 1 --memory-limit auto "${tls[@]}" ;;
  *) echo "start-cluster: ROLE must be scheduler or worker" >&2; exit 2 ;;
esac
