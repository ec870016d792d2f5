#!/usr/bin/env bash
# bench-postgres.sh runs a command beside a throwaway PostgreSQL server for
# the benchmark harness, with INCIDENTLIB_BENCH_POSTGRES set to its
# connection string (scripts/with-postgres.sh starts and removes the
# server).
#
#   scripts/bench-postgres.sh ./incidentlib-bench search --sizes 1000,10000,100000
#   scripts/bench-postgres.sh go run -C benchmark ./cmd/incidentlib-bench search --sizes 1000
#
# Settings: shared_buffers 1GB and work_mem 64MB (BENCH_PG_SHARED_BUFFERS,
# BENCH_PG_WORK_MEM) so that the 100k-case tables stay in memory, as the
# engine's index does; JIT off, since compiling a plan costs more than it
# saves on queries of tens of milliseconds.
set -euo pipefail
export PG_SETTINGS="-c shared_buffers=${BENCH_PG_SHARED_BUFFERS:-1GB} -c work_mem=${BENCH_PG_WORK_MEM:-64MB} -c maintenance_work_mem=512MB -c jit=off -c max_wal_size=4GB"
export PG_PORT=${BENCH_PG_PORT:-54329}
export PG_USER=${BENCH_PG_USER:-${PG_USER:-postgres}}
exec "$(dirname "$0")/with-postgres.sh" "$@"
