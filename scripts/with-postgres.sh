#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL cluster:
#   scripts/with-postgres.sh node scripts/run-tests.js test/http
# initdb creates a cluster in a temp dir, pg_ctl starts it on a free loopback
# port (trust auth, sockets inside the temp dir, so nothing touches the host's
# own PostgreSQL), the command runs with PACKS_TEST_DATABASE_URL set to the
# admin URL, and the cluster is stopped and deleted on exit, whatever happens.
# PostgreSQL refuses to run as root (CI is root): then the server runs as the
# `postgres` system user that Debian's server package creates.
set -euo pipefail

if [ "$#" -eq 0 ]; then
  echo "usage: scripts/with-postgres.sh <command> [args...]" >&2
  exit 2
fi

bindir="${PG_BINDIR:-}"
if [ -z "$bindir" ]; then
  for candidate in /usr/lib/postgresql/15/bin /usr/lib/postgresql/*/bin; do
    if [ -x "$candidate/initdb" ]; then bindir="$candidate"; break; fi
  done
fi
if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
  echo "with-postgres: no PostgreSQL server found (apt-get install postgresql-15, or set PG_BINDIR)" >&2
  exit 1
fi

as_pg=()
superuser="$(id -un)"
if [ "$(id -u)" -eq 0 ]; then
  if ! id postgres >/dev/null 2>&1; then
    echo "with-postgres: running as root needs the postgres system user (installed with the server package)" >&2
    exit 1
  fi
  as_pg=(runuser -u postgres --)
  superuser=postgres
fi

tmp="$(mktemp -d "${TMPDIR:-/tmp}/packs-pg-XXXXXX")"
# World-traversable so the postgres user reaches it when root created it.
chmod 755 "$tmp"
[ "${#as_pg[@]}" -gt 0 ] && chown postgres: "$tmp"

cleanup() {
  status=$?
  if [ -f "$tmp/data/postmaster.pid" ]; then
    "${as_pg[@]}" "$bindir/pg_ctl" -D "$tmp/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$tmp"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

port="$(node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")"

"${as_pg[@]}" "$bindir/initdb" -D "$tmp/data" -U "$superuser" --auth=trust --encoding=UTF8 --locale=C.UTF-8 >"$tmp/initdb.log" 2>&1 \
  || { cat "$tmp/initdb.log" >&2; exit 1; }

# Many test files run at once, each with its own databases and pools.
# fsync off: the cluster is thrown away, durability buys nothing here.
"${as_pg[@]}" "$bindir/pg_ctl" -D "$tmp/data" -l "$tmp/server.log" -w -t 60 \
  -o "-p $port -h 127.0.0.1 -k $tmp -c max_connections=400 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" start >/dev/null \
  || { cat "$tmp/server.log" >&2; exit 1; }

export PACKS_TEST_DATABASE_URL="postgres://$superuser@127.0.0.1:$port/postgres"
echo "with-postgres: PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') on 127.0.0.1:$port" >&2
"$@"
