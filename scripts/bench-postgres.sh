#!/usr/bin/env bash
# bench-postgres.sh starts a throwaway PostgreSQL server for the benchmark
# harness, runs a command with INCIDENTLIB_BENCH_POSTGRES set to its
# connection string, and stops and deletes the server afterwards.
#
#   scripts/bench-postgres.sh incidentlib-bench search --sizes 1000,10000,100000
#   scripts/bench-postgres.sh go run -C benchmark ./cmd/incidentlib-bench search --sizes 1000
#
# The harness is in the benchmark module (benchmark/go.mod), apart from the
# server's, so that the server never builds the SQL drivers.
#
# The server lives in a temporary directory, listens only on a Unix socket
# there, and trusts local connections: it holds nothing but benchmark data.
# It needs the PostgreSQL server binaries (Debian: apt-get install
# postgresql). initdb refuses to run as root, so as root the server runs as
# the "postgres" user (set BENCH_PG_USER to choose another).
#
# Settings: shared_buffers 1GB and work_mem 64MB (BENCH_PG_SHARED_BUFFERS,
# BENCH_PG_WORK_MEM) so that the 100k-case tables stay in memory, as the
# engine's index does; JIT off, since compiling a plan costs more than it
# saves on queries of tens of milliseconds.
set -euo pipefail

if [ "$#" -eq 0 ]; then
	echo "usage: $0 command [args...]" >&2
	exit 2
fi

bindir=""
if command -v pg_ctl >/dev/null 2>&1; then
	bindir=$(dirname "$(command -v pg_ctl)")
else
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
		if [ -x "$d/pg_ctl" ]; then
			bindir=$d
			break
		fi
	done
fi
if [ -z "$bindir" ]; then
	echo "$0: no PostgreSQL server binaries found (Debian: apt-get install postgresql)" >&2
	exit 1
fi

as_user=()
if [ "$(id -u)" -eq 0 ]; then
	user=${BENCH_PG_USER:-postgres}
	if ! id "$user" >/dev/null 2>&1; then
		echo "$0: running as root and there is no user \"$user\" to run the server as; set BENCH_PG_USER" >&2
		exit 1
	fi
	as_user=(runuser -u "$user" --)
else
	user=$(id -un)
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/incidentlib-pg.XXXXXX")
chmod 755 "$dir"
if [ "${#as_user[@]}" -gt 0 ]; then
	chown "$user" "$dir"
fi
port=${BENCH_PG_PORT:-54329}

stop() {
	"${as_user[@]}" "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
	rm -rf "$dir"
}
trap stop EXIT INT TERM

"${as_user[@]}" "$bindir/initdb" -D "$dir/data" -U "$user" --auth=trust --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 || {
	cat "$dir/initdb.log" >&2
	exit 1
}
"${as_user[@]}" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w start -o "\
 -c listen_addresses='' -c unix_socket_directories='$dir' -c port=$port\
 -c shared_buffers=${BENCH_PG_SHARED_BUFFERS:-1GB} -c work_mem=${BENCH_PG_WORK_MEM:-64MB}\
 -c maintenance_work_mem=512MB -c jit=off -c fsync=off -c synchronous_commit=off\
 -c full_page_writes=off -c max_wal_size=4GB" >/dev/null || {
	cat "$dir/server.log" >&2
	exit 1
}

export INCIDENTLIB_BENCH_POSTGRES="host=$dir port=$port user=$user dbname=postgres sslmode=disable"
echo "$0: PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') running at $dir (port $port)" >&2
set +e
"$@"
status=$?
set -e
exit $status
