#!/usr/bin/env bash
# with-postgres.sh starts a throwaway PostgreSQL server, runs a command with
# INCIDENTLIB_TEST_DATABASE_URL (and INCIDENTLIB_BENCH_POSTGRES, for the
# benchmark) set to its connection string, and stops and deletes the server
# afterwards. The PostgreSQL store's tests use it:
#
#   INCIDENTLIB_POSTGRES_TESTS=1 scripts/with-postgres.sh go test ./pgstore/ ./cmd/incidentlib/
#
# PG_SETTINGS adds server settings ("-c name=value ..."); scripts/
# bench-postgres.sh uses it for the benchmark's memory settings.
# The server lives in a temporary directory, listens only on a Unix socket
# there and trusts local connections: it holds nothing but test data. It
# needs the PostgreSQL server binaries (Debian: apt-get install postgresql).
# initdb refuses to run as root, so as root the server runs as the
# "postgres" user (PG_USER chooses another).
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
	user=${PG_USER:-postgres}
	if ! id "$user" >/dev/null 2>&1; then
		echo "$0: running as root and there is no user \"$user\" to run the server as; set PG_USER" >&2
		exit 1
	fi
	as_user=(runuser -u "$user" --)
else
	user=$(id -un)
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/incidentlib-pgtest.XXXXXX")
chmod 755 "$dir"
if [ "${#as_user[@]}" -gt 0 ]; then
	chown "$user" "$dir"
fi
port=${PG_PORT:-54339}

stop() {
	"${as_user[@]}" "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
	rm -rf "$dir"
}
trap stop EXIT INT TERM

"${as_user[@]}" "$bindir/initdb" -D "$dir/data" -U "$user" --auth=trust --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 || {
	cat "$dir/initdb.log" >&2
	exit 1
}
"${as_user[@]}" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w start -o "\
 -c listen_addresses='' -c unix_socket_directories='$dir' -c port=$port\
 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 ${PG_SETTINGS:-}" >/dev/null || {
	cat "$dir/server.log" >&2
	exit 1
}

export INCIDENTLIB_TEST_DATABASE_URL="host=$dir port=$port user=$user dbname=postgres sslmode=disable"
export INCIDENTLIB_BENCH_POSTGRES="$INCIDENTLIB_TEST_DATABASE_URL"
echo "$0: PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') running at $dir (port $port)" >&2
set +e
"$@"
status=$?
set -e
exit $status
