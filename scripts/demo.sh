#!/usr/bin/env bash
# scripts/demo.sh - build and install the snowflake extension, then watch it
# hand out IDs to concurrent sessions in a throwaway PostgreSQL cluster.
#
# Installs the Debian packages it needs (through sudo when not root). The
# cluster lives in a temporary directory, listens on a unix socket there only
# (no TCP), and is stopped and removed on exit, including on error or Ctrl-C.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SESSIONS=4	# concurrent psql sessions
ROWS=1000	# rows each session inserts, one INSERT statement at a time
# The socket sits in our own directory and there is no TCP listener, so this
# port cannot clash with any other server on the machine.
PORT=5439
unset PGHOST PGPORT PGUSER PGDATABASE PGOPTIONS PGSERVICE

major=$(host_major) || exit 1
use_major "$major"
# shellcheck disable=SC2046 # one word per package
install_packages $(packages_for "$PG_MAJOR" "${DEMO_PACKAGES[@]}")
build_and_install

enter_workdir demo

say "Creating a throwaway cluster in $WORK (runs as $(pg_user))"
cluster_create "$WORK" "$PORT" <<EOF
fsync = off				# a throwaway cluster
shared_preload_libraries = 'snowflake'
snowflake.worker_id = 1
EOF
sed -n '/^# added by demo.sh/,$p' "$WORK/data/postgresql.conf"
cluster_start "$WORK"

run_psql() {
	as_pg "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -P pager=off \
		-h "$WORK" -p "$PORT" -d postgres "$@"
}

say "Creating the extension and a table whose ids come from snowflake_nextval()"
run_psql -e <<'EOF'
CREATE EXTENSION snowflake;
CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), note text);
EOF

say "Inserting $ROWS rows from each of $SESSIONS concurrent sessions, one INSERT at a time"
start_ms=$(date +%s%3N)
pids=()
for s in $(seq "$SESSIONS"); do
	echo "SELECT format('INSERT INTO orders (note) VALUES (%L)', 'session $s row ' || i)
	      FROM generate_series(1, $ROWS) AS i \gexec" | run_psql &
	pids+=($!)
done
for pid in "${pids[@]}"; do
	wait "$pid" || die "an inserting session failed"
done
echo "done in $(($(date +%s%3N) - start_ms)) ms"

run_psql <<EOF
CREATE TEMP VIEW o AS
	SELECT id, note, split_part(note, ' ', 2)::int AS session,
	       split_part(note, ' ', 4)::int AS row_no, p.*
	FROM orders, snowflake_parse(id) AS p;

\echo
\echo '==> Every row got an id, and no two ids are the same'
SELECT count(*) AS rows, count(DISTINCT id) AS distinct_ids,
       count(*) = count(DISTINCT id) AS all_distinct
FROM o;

-- the middle of the stretch of ids during which every session was inserting
SELECT min(last_id) / 2 + max(first_id) / 2 AS mid
FROM (SELECT min(id) AS first_id, max(id) AS last_id FROM o GROUP BY session) AS s \gset

\echo '==> Ten consecutive ids taken apart by snowflake_parse(id)'
\echo '    (ids made in the same millisecond differ in their sequence number)'
SELECT id, note, created_at, worker_id, sequence
FROM o WHERE id >= :mid ORDER BY id LIMIT 10;

\echo '==> When the ids were made'
SELECT min(created_at) AS first_created_at, max(created_at) AS last_created_at,
       max(created_at) - min(created_at) AS span,
       count(DISTINCT created_at) AS milliseconds_used,
       max(sequence) + 1 AS most_ids_in_one_millisecond
FROM o;

\echo '==> Each session: its id ranges overlap the others, and its ids grow in insert order'
SELECT session, count(*) AS rows, min(id) AS first_id, max(id) AS last_id,
       bool_and(id > prev_id OR prev_id IS NULL) AS ids_grow
FROM (SELECT *, lag(id) OVER (PARTITION BY session ORDER BY row_no) AS prev_id FROM o) AS s
GROUP BY session ORDER BY session;

\echo '==> The sessions interleave: the session behind each of 60 consecutive ids'
SELECT string_agg(session::text, '' ORDER BY id) AS sessions_in_id_order,
       count(*) FILTER (WHERE session <> prev) AS session_changes
FROM (SELECT * FROM (SELECT id, session, lag(session) OVER (ORDER BY id) AS prev FROM o) AS s
      WHERE id >= :mid ORDER BY id LIMIT 60) AS w;
EOF
