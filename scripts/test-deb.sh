#!/usr/bin/env bash
# scripts/test-deb.sh - install the postgresql-15-snowflake package and test
# it on a fresh cluster.
#
# usage: scripts/test-deb.sh [DEB]
#
# Without DEB, builds one first with scripts/build-deb.sh. Then, as root (or
# through sudo):
#   1. dpkg -i DEB, and dpkg --verify that the installed files are the
#      package's;
#   2. checks that the installed control file and SQL scripts are this
#      tree's, byte for byte;
#   3. creates a fresh cluster in a temporary directory (as the postgres user
#      when run as root), preloads snowflake with a worker id, and checks
#      CREATE EXTENSION, the version, IDs, the registry, the upgrade path from
#      1.0, and a crash restart (which replays the mark's WAL records, so the
#      packaged library must register the resource manager);
#   4. stops the cluster and removes it.
# The package stays installed: its files are what `make install` of this tree
# puts in the same places. Remove it with `dpkg -r postgresql-15-snowflake`.
#
# dpkg -i replaces the extension files that every worktree shares: run this
# under the same lock as `make install` and the tests (it does not take the
# lock itself, so that it can be called from a command that holds it).
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PKG=postgresql-15-snowflake

DEB=${1:-}
if [ -z "$DEB" ]; then
	DEB=$(bash "$REPO/scripts/build-deb.sh" | tail -n 1)
fi
[ -f "$DEB" ] || die "no such package: $DEB"

say "Installing $DEB"
as_root env DEBIAN_FRONTEND=noninteractive dpkg -i "$DEB"
verify=$(as_root dpkg --verify "$PKG" || true)
[ -z "$verify" ] || die "dpkg --verify $PKG reports changed files:
$verify"

say "Checking that the installed files are this tree's"
sharedir=$("$PG_BINDIR/pg_config" --sharedir)/extension
for f in "$REPO"/snowflake.control "$REPO"/snowflake--*.sql; do
	cmp "$f" "$sharedir/$(basename "$f")" || die "$sharedir/$(basename "$f") differs from $f"
	echo "    $(basename "$f"): same"
done
listed=$(dpkg -L "$PKG" | grep -c '/extension/snowflake' || true)
tree=$(find "$REPO" -maxdepth 1 \( -name snowflake.control -o -name 'snowflake--*.sql' \) | wc -l)
[ "$listed" -eq "$tree" ] || die "the package has $listed extension files, the tree $tree"

say "Testing it on a fresh cluster"
WORK=$(mktemp -d /tmp/snowflake-testdeb.XXXXXX)
is_root && chown postgres: "$WORK"
PGDATA=$WORK/data
PORT=$((20000 + RANDOM % 10000))
cleanup() {
	if [ -f "$PGDATA/postmaster.pid" ]; then
		as_pg "$PG_BINDIR/pg_ctl" -D "$PGDATA" -m immediate stop >/dev/null 2>&1 || true
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT

as_pg "$PG_BINDIR/initdb" -D "$PGDATA" -A trust -U postgres >"$WORK/initdb.log" 2>&1 ||
	{ cat "$WORK/initdb.log"; die "initdb failed"; }
cat >>"$PGDATA/postgresql.conf" <<EOF
port = $PORT
listen_addresses = ''
unix_socket_directories = '$WORK'
shared_preload_libraries = 'snowflake'
snowflake.worker_id = 42
EOF
start() {
	as_pg "$PG_BINDIR/pg_ctl" -D "$PGDATA" -l "$WORK/server.log" -w start >/dev/null ||
		{ cat "$WORK/server.log"; die "the server did not start"; }
}
sql() { as_pg "$PG_BINDIR/psql" -X -h "$WORK" -p "$PORT" -U postgres -d "${DB:-postgres}" -v ON_ERROR_STOP=1 -Atq "$@"; }
expect() {	# expect NAME EXPECTED SQL
	local got
	got=$(sql -c "$3") || die "$1: the query failed"
	[ "$got" = "$2" ] || die "$1: expected '$2', got '$got'"
	echo "    ok: $1"
}
start

version=$(sed -n "s/^default_version[[:space:]]*=[[:space:]]*'\([^']*\)'.*/\1/p" "$REPO/snowflake.control")
sql -c 'CREATE EXTENSION snowflake'
expect "CREATE EXTENSION installs version $version" "$version" \
	"SELECT extversion FROM pg_extension WHERE extname = 'snowflake'"
expect "IDs carry worker id 42 and increase" "42|t" \
	"SELECT (snowflake_parse(b)).worker_id, b > a FROM (SELECT snowflake_nextval() a, snowflake_nextval() b) s"
expect "the worker registers" "42" "SELECT worker_id FROM snowflake_register_worker('test-deb')"
expect "snowflake_stats counts the IDs" "t" "SELECT ids_issued >= 2 FROM snowflake_stats"

sql -c 'CREATE DATABASE upgrade'
DB=upgrade sql -c "CREATE EXTENSION snowflake VERSION '1.0'"
DB=upgrade sql -c 'ALTER EXTENSION snowflake UPDATE'
DB=upgrade expect "ALTER EXTENSION UPDATE from 1.0 reaches $version" "$version" \
	"SELECT extversion FROM pg_extension WHERE extname = 'snowflake'"

last=$(sql -c 'SELECT snowflake_nextval()')
as_pg "$PG_BINDIR/pg_ctl" -D "$PGDATA" -m immediate stop >/dev/null
start
expect "after a crash restart, IDs continue above the last one" "t" \
	"SELECT snowflake_nextval() > $last"
grep -q 'redo starts' "$WORK/server.log" || die "the crash restart did not replay WAL"
echo "    ok: the crash restart replayed WAL through the packaged resource manager"

as_pg "$PG_BINDIR/pg_ctl" -D "$PGDATA" -m fast stop >/dev/null
say "The package $(basename "$DEB") installs and works on a fresh cluster"
echo "test-deb: 1 passed, 0 failed"
