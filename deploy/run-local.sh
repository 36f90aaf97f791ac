#!/usr/bin/env bash
# The production topology without containers, on one machine: migrate the store once, start three
# `groundstate serve` replicas on PostgreSQL sandboxes, put HAProxy (Debian's `haproxy` package) in front with
# deploy/haproxy.cfg, the same file docker-compose.yml uses. Runs in the foreground until Ctrl-C or SIGTERM,
# or until any replica or HAProxy exits; then stops all of them. tests/deploy/test_local_topology.py runs
# this very script.
#
# Settings (environment; every GROUNDSTATE_* variable also reaches the servers, e.g. GROUNDSTATE_API_KEY):
#   GS_STORE_URL    control-plane store      (default postgresql+psycopg://postgres@127.0.0.1:5432/groundstate)
#   GS_SANDBOX_URL  sandbox database         (default .../groundstate_sandboxes; both databases must exist)
#   GS_LB_PORT      the load balancer's port (default 8000; clients use http://127.0.0.1:$GS_LB_PORT)
#   GS_FIRST_PORT   replica i listens on GS_FIRST_PORT + i - 1 (default 8101)
#   GS_STATS_PORT   HAProxy stats (/stats) and Prometheus metrics (/metrics) (default 8404)
#   GS_WORKERS      worker processes per replica (default 2)
#   GROUNDSTATE_DB_POOL_SIZE  connections each worker pools (default: sized so that 3 replicas x GS_WORKERS
#                   workers, each holding up to 6x the pool in a burst, stay within 3/4 of the PostgreSQL
#                   server's max_connections; read with psql, 8 when psql is missing)
#   GS_RUN_DIR      logs: gs1.log .. gs3.log, haproxy.log (default .groundstate/run-local)
#   GROUNDSTATE     the groundstate executable (default: groundstate on PATH)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
pg=postgresql+psycopg://postgres@127.0.0.1:5432
store_url=${GS_STORE_URL:-$pg/groundstate}
sandbox_url=${GS_SANDBOX_URL:-$pg/groundstate_sandboxes}
lb_port=${GS_LB_PORT:-8000}
first_port=${GS_FIRST_PORT:-8101}
stats_port=${GS_STATS_PORT:-8404}
workers=${GS_WORKERS:-2}
run_dir=${GS_RUN_DIR:-.groundstate/run-local}
groundstate=${GROUNDSTATE:-groundstate}
mkdir -p "$run_dir"

# A worker holds up to 6 x GROUNDSTATE_DB_POOL_SIZE connections at the worst moment (store and sandboxes,
# each the pool plus twice as many in a burst): past the server's max_connections PostgreSQL refuses
# connections and requests fail as 503. Size the pool to fit unless the caller chose one.
if [ -z "${GROUNDSTATE_DB_POOL_SIZE:-}" ] && command -v psql >/dev/null; then
  max_connections=$(psql -qtAX "${sandbox_url/+psycopg/}" -c 'SHOW max_connections')
  GROUNDSTATE_DB_POOL_SIZE=$((max_connections * 3 / 4 / (3 * workers * 6)))
  ((GROUNDSTATE_DB_POOL_SIZE >= 1)) || GROUNDSTATE_DB_POOL_SIZE=1
  export GROUNDSTATE_DB_POOL_SIZE
  echo "GROUNDSTATE_DB_POOL_SIZE=$GROUNDSTATE_DB_POOL_SIZE (max_connections $max_connections, 3 x $workers workers)"
fi

pids=()
stop() {
  trap - EXIT INT TERM
  if ((${#pids[@]})); then kill -TERM "${pids[@]}" 2>/dev/null || true; fi
  wait || true
}
trap 'stop; exit 0' INT TERM
trap stop EXIT

wait_healthy() {  # url, what
  for _ in $(seq 240); do
    if curl -fsS -o /dev/null "$1/healthz" 2>/dev/null; then return 0; fi
    sleep 0.5
  done
  echo "$2 did not become healthy at $1 (logs in $run_dir)" >&2
  return 1
}

# 1. The store's migrations, once, before any server starts (the servers only check the revision).
GROUNDSTATE_STORE_URL=$store_url "$groundstate" db upgrade

# 2. Three replicas; sandboxes and episodes live in PostgreSQL, so any replica serves any request.
for i in 1 2 3; do
  port=$((first_port + i - 1))
  GROUNDSTATE_STORE_URL=$store_url GROUNDSTATE_SANDBOX_URL=$sandbox_url GROUNDSTATE_REPLICA_ID=gs$i \
    "$groundstate" serve --no-migrate --host 127.0.0.1 --port "$port" --workers "$workers" \
    >"$run_dir/gs$i.log" 2>&1 &
  pids+=($!)
  export "GS_REPLICA_$i=127.0.0.1:$port"
done
for i in 1 2 3; do wait_healthy "http://127.0.0.1:$((first_port + i - 1))" "replica gs$i"; done

# 3. HAProxy in front, in the foreground (-db) so this script supervises it.
GS_LB_BIND=127.0.0.1:$lb_port GS_STATS_BIND=127.0.0.1:$stats_port GS_DNS=127.0.0.1:53 \
  haproxy -db -f "$here/haproxy.cfg" >"$run_dir/haproxy.log" 2>&1 &
pids+=($!)
wait_healthy "http://127.0.0.1:$lb_port" "the load balancer"
echo "groundstate ready on http://127.0.0.1:$lb_port (3 replicas x $workers workers, pool" \
  "${GROUNDSTATE_DB_POOL_SIZE:-8}; HAProxy stats on" \
  "http://127.0.0.1:$stats_port/stats)"

# 4. Supervise: the first process to exit stops the whole topology.
wait -n
echo "a process of the topology exited; stopping the rest (logs in $run_dir)" >&2
exit 1
