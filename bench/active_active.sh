#!/usr/bin/env bash
# bench/active_active.sh - active-active writes keyed by snowflake_nextval()
# and by bigserial, side by side, over a three-node pglogical mesh.
#
# usage: bash bench/active_active.sh
#
# Installs what is missing (Debian packages, through sudo when not root),
# builds and installs the extension, and, for each replication delay of
# BENCH_DELAYS (a round), starts three throwaway clusters on this machine (as
# the postgres user when run as root) with worker ids 11, 12 and 13.  Each
# subscribes to the other two with pglogical (forward_origins := '{}', so
# that no node passes on rows it received; conflict resolution is
# pglogical's default, apply_remote; apply_delay := the round's delay, to
# stand for the distance between nodes that are not on one machine).  pgbench
# then runs on all three at once, each client inserting one row into a table
# keyed by snowflake_nextval() and one into a table keyed by bigserial, each
# in a transaction of its own; an insert refused with a duplicate key is
# counted and skipped.  Every node records locally (not replicated) which
# rows it committed.  Once replication has settled, the round compares per
# table: rows committed, duplicate-key errors, conflicts pglogical logged,
# whether the nodes hold the same rows, and how many committed rows are
# missing or different on some node.  Prints a markdown report and writes it
# to BENCH_OUT/active_active.md.
#
# Environment: BENCH_SECONDS (60) of pgbench per round; BENCH_CLIENTS (2)
# per node; BENCH_DELAYS ("0 1s") the rounds' apply delays; BENCH_SETTLE
# (180) seconds at most to wait for replication to settle; BENCH_OUT
# (bench/out); PG_CONFIG to use a PostgreSQL other than the system's (the
# extension is installed there).
set -euo pipefail
user_pg_config=${PG_CONFIG:-}
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"
if [ -n "$user_pg_config" ]; then
	PG_CONFIG=$user_pg_config
	PG_BINDIR=$("$PG_CONFIG" --bindir)
	PG_MAJOR=$("$PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
else
	use_major "$(host_major)"
fi

SECS=${BENCH_SECONDS:-60}
CLIENTS=${BENCH_CLIENTS:-2}
read -r -a DELAYS <<<"${BENCH_DELAYS:-0 1s}"
SETTLE=${BENCH_SETTLE:-180}
OUT=${BENCH_OUT:-$REPO/bench/out}
NODES=(1 2 3)
unset PGHOST PGPORT PGUSER PGDATABASE PGOPTIONS PGSERVICE

# shellcheck disable=SC2046 # one package name a line
install_packages $(packages_for "$PG_MAJOR" "${DEMO_PACKAGES[@]}" postgresql-@PG@-pglogical)
build_and_install
[ -e "$("$PG_CONFIG" --pkglibdir)/pglogical.so" ] ||
	die "pglogical is not installed in $("$PG_CONFIG" --pkglibdir)"

enter_workdir active-active
# The clusters of the current round (ROUND, a directory) and the report
# cluster, stopped on exit whatever happens.
ROUND=
stop_clusters() {
	local dir
	for dir in ${ROUND:+"$ROUND"/node*} "$WORK/report"; do
		[ -f "$dir/data/postmaster.pid" ] && cluster_stop "$dir"
	done
	return 0
}
# (leave_workdir reads the exit status from $?, which set -e must not act on)
trap 'status=$?; stop_clusters; set +e; (exit "$status"); leave_workdir' EXIT

port() { echo $((5450 + $1)); }
dsn() { echo "host=$ROUND/node$1 port=$(port "$1") dbname=bench"; }
psql_node() {	# psql_node N ARGS...: psql on node N's bench database
	local n=$1
	shift
	as_pg "$PG_BINDIR/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$ROUND/node$n" -p "$(port "$n")" -d bench "$@"
}
psql_report() {
	as_pg "$PG_BINDIR/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$WORK/report" -p "$(port 0)" -d postgres "$@"
}

# Since the minor releases of August 2026 (15.19, 17.11, 18.6) a walsender
# only loads the output plugins that output_plugin_libraries lists (pgoutput
# and test_decoding by default); pglogical's is pglogical_output.  Older
# servers lack the setting.
plugin_conf=
settings=$("$PG_BINDIR/postgres" --describe-config)
if grep -q '^output_plugin_libraries' <<<"$settings"; then
	plugin_conf="output_plugin_libraries = 'pgoutput, test_decoding, pglogical_output'"
fi

# The report cluster collects every round's raw numbers.
as_pg mkdir "$WORK/report"
cluster_create "$WORK/report" "$(port 0)" </dev/null
cluster_start "$WORK/report"
psql_report <<EOF
CREATE TABLE committed (round int, origin int, tbl text, id bigint, token text);
CREATE TABLE final_rows (round int, seen_on int, tbl text, id bigint, node int, token text);
CREATE INDEX ON final_rows (round, tbl, id);
CREATE TABLE node_stats (round int, node int, tbl text, refused bigint, conflicts bigint,
                         apply_errors bigint, worker_exits bigint, status text);
CREATE TABLE rounds (round int, delay text, tps text, settled text);
EOF

# setup_round: three clusters in ROUND, the tables, the mesh with apply
# delay $1.
setup_round() {
	local delay=$1 n m
	for n in "${NODES[@]}"; do
		as_pg mkdir -p "$ROUND/node$n"
		cluster_create "$ROUND/node$n" "$(port "$n")" <<EOF
shared_preload_libraries = 'pglogical, snowflake'
snowflake.worker_id = $((10 + n))
wal_level = logical
max_worker_processes = 16
max_replication_slots = 10
max_wal_senders = 10
shared_buffers = 128MB
synchronous_commit = off
log_line_prefix = '%m [%p] %q%a '
$plugin_conf
EOF
		cluster_start "$ROUND/node$n"
		as_pg "$PG_BINDIR/createdb" -h "$ROUND/node$n" -p "$(port "$n")" bench
		psql_node "$n" >/dev/null <<EOF
CREATE EXTENSION snowflake;
CREATE EXTENSION pglogical;
CREATE TABLE t_snowflake (id bigint PRIMARY KEY DEFAULT snowflake_nextval(),
                          node int NOT NULL, token text NOT NULL);
CREATE TABLE t_bigserial (id bigserial PRIMARY KEY, node int NOT NULL, token text NOT NULL);
-- this node's own record of what it committed and what it was refused (not replicated)
CREATE TABLE committed (tbl text NOT NULL, id bigint NOT NULL, token text NOT NULL);
CREATE TABLE refused (tbl text NOT NULL);
CREATE FUNCTION bench_insert(tbl text, node int) RETURNS void LANGUAGE plpgsql AS \$\$
DECLARE
    token text := gen_random_uuid()::text;
    new_id bigint;
BEGIN
    EXECUTE format('INSERT INTO %I (node, token) VALUES (\$1, \$2) RETURNING id', tbl)
       INTO new_id USING node, token;
    INSERT INTO committed VALUES (tbl, new_id, token);
EXCEPTION WHEN unique_violation THEN
    INSERT INTO refused VALUES (tbl);
END
\$\$;
SELECT pglogical.create_node(node_name := 'node$n', dsn := '$(dsn "$n")');
SELECT pglogical.replication_set_add_table('default', 't_snowflake');
SELECT pglogical.replication_set_add_table('default', 't_bigserial');
EOF
	done
	for n in "${NODES[@]}"; do
		for m in "${NODES[@]}"; do
			[ "$n" = "$m" ] && continue
			psql_node "$n" -c "SELECT pglogical.create_subscription(
				subscription_name := 'node${n}_from_node$m', provider_dsn := '$(dsn "$m")',
				replication_sets := '{default}', synchronize_structure := false,
				synchronize_data := false, forward_origins := '{}',
				apply_delay := '$delay')" >/dev/null
		done
	done
	for n in "${NODES[@]}"; do
		for _ in $(seq 240); do
			[ "$(psql_node "$n" -c "SELECT count(*) FILTER (WHERE status = 'replicating')
				FROM pglogical.show_subscription_status()")" = 2 ] && continue 2
			sleep 0.5
		done
		psql_node "$n" -c "SELECT subscription_name, status FROM pglogical.show_subscription_status()" >&2
		die "the subscriptions of node$n did not start replicating"
	done
}

# counts: the rows of both tables on every node
counts() {
	local n
	for n in "${NODES[@]}"; do
		psql_node "$n" -c "SELECT (SELECT count(*) FROM t_snowflake) || '/' || (SELECT count(*) FROM t_bigserial)"
	done | paste -sd' '
}

# run_round I DELAY
run_round() {
	local round=$1 delay=$2 n pid pids=() tps=() settled current previous lagging start t log status
	local exits refused conflicts errors
	declare -A log_offset
	ROUND=$WORK/round$round
	say "Round $round: apply delay $delay; three clusters in $ROUND (as $(pg_user)), worker ids 11, 12, 13"
	setup_round "$delay"

	say "Round $round: pgbench on all three nodes at once, $SECS s, $CLIENTS clients each"
	for n in "${NODES[@]}"; do
		log_offset[$n]=$(stat -c %s "$ROUND/node$n/server.log")
		printf "SELECT bench_insert('t_snowflake', %s);\nSELECT bench_insert('t_bigserial', %s);\n" \
			"$n" "$n" | as_pg tee "$ROUND/node$n/insert.sql" >/dev/null
		as_pg "$PG_BINDIR/pgbench" -h "$ROUND/node$n" -p "$(port "$n")" -n -T "$SECS" \
			-c "$CLIENTS" -j "$CLIENTS" -f "$ROUND/node$n/insert.sql" bench \
			>"$ROUND/pgbench$n.log" 2>&1 &
		pids+=($!)
	done
	for pid in "${pids[@]}"; do
		wait "$pid" || die "pgbench failed: $(cat "$ROUND"/pgbench*.log)"
	done
	for n in "${NODES[@]}"; do
		tps+=("$(sed -n 's/^tps = \([0-9]*\).*/\1/p' "$ROUND/pgbench$n.log")")
	done
	echo "    tps per node: ${tps[*]}"

	# Settled: on every node each subscription's slot has confirmed all of
	# its WAL, and the row counts stopped changing.
	say "Round $round: waiting up to $SETTLE s for replication to settle"
	settled=
	start=$SECONDS
	previous=$(counts)
	while [ $((SECONDS - start)) -lt "$SETTLE" ]; do
		sleep 2
		current=$(counts)
		lagging=0
		for n in "${NODES[@]}"; do
			lagging=$((lagging + $(psql_node "$n" -c "SELECT count(*) FROM pg_replication_slots
				WHERE plugin = 'pglogical_output'
				  AND (confirmed_flush_lsn IS NULL OR confirmed_flush_lsn < pg_current_wal_insert_lsn() - 1024)")))
		done
		if [ "$lagging" -eq 0 ] && [ "$current" = "$previous" ]; then
			settled="$((SECONDS - start)) s"
			break
		fi
		previous=$current
	done
	echo "    rows (snowflake/bigserial) per node: $current; settled after: ${settled:-NOT within $SETTLE s}"
	psql_report -c "INSERT INTO rounds VALUES ($round, '$delay', '${tps[*]}', '${settled:-not within $SETTLE s}')"

	say "Round $round: collecting what each node committed and holds"
	for n in "${NODES[@]}"; do
		psql_node "$n" -c "\\copy (SELECT $round, $n, tbl, id, token FROM committed) TO STDOUT" |
			psql_report -c "\\copy committed FROM STDIN"
		for t in t_snowflake t_bigserial; do
			psql_node "$n" -c "\\copy (SELECT $round, $n, '$t', id, node, token FROM $t) TO STDOUT" |
				psql_report -c "\\copy final_rows FROM STDIN"
		done
		log=$(tail -c +$((log_offset[$n] + 1)) "$ROUND/node$n/server.log")
		status=$(psql_node "$n" -c "SELECT string_agg(status, ',' ORDER BY subscription_name)
			FROM pglogical.show_subscription_status()")
		exits=$(grep -c 'background worker "pglogical apply.*exited with exit code' <<<"$log" || true)
		for t in t_snowflake t_bigserial; do
			refused=$(psql_node "$n" -c "SELECT count(*) FROM refused WHERE tbl = '$t'")
			conflicts=$(grep -c "CONFLICT: remote [A-Z]* on relation public\.$t " <<<"$log" || true)
			errors=$(grep -E 'pglogical apply.*ERROR:' <<<"$log" | grep -c "public\.$t\|\"$t" || true)
			psql_report -c "INSERT INTO node_stats VALUES ($round, $n, '$t', $refused, $conflicts, $errors, $exits, '$status')"
		done
	done
	for n in "${NODES[@]}"; do cluster_stop "$ROUND/node$n"; done
	ROUND=
}

for i in "${!DELAYS[@]}"; do
	run_round $((i + 1)) "${DELAYS[$i]}"
done
psql_report -c "ANALYZE"

say "Report"
# One row of the table: LABEL, and SQL giving the value for round r and
# table t (both in scope as columns of the query around it).
report_row() {
	local values
	values=$(psql_report -c "SELECT string_agg(coalesce(($2)::text, ''), ' | ' ORDER BY r, t DESC)
		FROM (SELECT round AS r FROM rounds) rs,
		     (VALUES ('t_snowflake'), ('t_bigserial')) AS ts(t)")
	echo "| $1 | $values |"
}
pglogical_version=$(as_pg "$PG_BINDIR/psql" -X -At -h "$WORK/report" -p "$(port 0)" -d postgres \
	-c "SELECT default_version FROM pg_available_extensions WHERE name = 'pglogical'")
mkdir -p "$OUT"
{
	echo "# Active-active writes: snowflake_nextval() and bigserial keys side by side"
	echo
	echo "Run $(date -u '+%Y-%m-%d %H:%M UTC') by \`bash bench/active_active.sh\` on $(nproc) cores" \
		"($(lscpu | sed -n 's/^Model name: *//p' | head -n 1)), $("$PG_BINDIR/postgres" --version | sed 's/^postgres (PostgreSQL) /PostgreSQL /')," \
		"pglogical $pglogical_version."
	echo
	echo "Three nodes on one machine, worker ids 11, 12 and 13, each subscribed to the two others with pglogical" \
		"(\`forward_origins := '{}'\`, conflict resolution \`apply_remote\`, the default), \`synchronous_commit = off\`." \
		"In each round pgbench ran on all three at once for $SECS s, $CLIENTS clients each; each client inserted a row into" \
		"the snowflake-keyed table and a row into the bigserial-keyed table, each in its own transaction, and an insert" \
		"refused with a duplicate key was counted and skipped. The rounds differ in pglogical's \`apply_delay\`, which" \
		"stands for the replication lag between nodes that are not on one machine."
	echo
	header="| per table"
	rule="| ---"
	while IFS='|' read -r delay; do
		header+=" | \`snowflake_nextval()\`, delay $delay | \`bigserial\`, delay $delay"
		rule+=" | ---: | ---:"
	done < <(psql_report -c "SELECT delay FROM rounds ORDER BY round")
	echo "$header |"
	echo "$rule |"
	report_row "inserts committed: all nodes (node1 / node2 / node3)" \
		"(SELECT sum(c) || ' (' || string_agg(c::text, ' / ' ORDER BY n) || ')'
		    FROM (SELECT n, (SELECT count(*) FROM committed WHERE round = r AND tbl = t AND origin = n) AS c
		            FROM unnest('{1,2,3}'::int[]) AS n) x)"
	report_row "inserts refused with a duplicate key: all nodes (node1 / node2 / node3)" \
		"(SELECT sum(refused) || ' (' || string_agg(refused::text, ' / ' ORDER BY node) || ')'
		    FROM node_stats WHERE round = r AND tbl = t)"
	report_row "conflicts pglogical resolved (\`CONFLICT: remote INSERT\`), per node" \
		"(SELECT string_agg(conflicts::text, ' / ' ORDER BY node) FROM node_stats WHERE round = r AND tbl = t)"
	report_row "rows held at the end, per node" \
		"(SELECT string_agg(c::text, ' / ' ORDER BY seen_on) FROM (SELECT seen_on, count(*) AS c FROM final_rows WHERE round = r AND tbl = t GROUP BY seen_on) x)"
	report_row "committed rows that every node holds unchanged" \
		"(SELECT count(*) FROM committed c WHERE round = r AND tbl = t AND (SELECT count(*) FROM final_rows f WHERE f.round = r AND f.tbl = t AND f.id = c.id AND f.token = c.token) = 3)"
	report_row "committed rows missing or overwritten on some node" \
		"(SELECT count(*) FROM committed c WHERE round = r AND tbl = t AND (SELECT count(*) FROM final_rows f WHERE f.round = r AND f.tbl = t AND f.id = c.id AND f.token = c.token) < 3)"
	report_row "committed rows missing or overwritten on every node (lost)" \
		"(SELECT count(*) FROM committed c WHERE round = r AND tbl = t AND NOT EXISTS (SELECT FROM final_rows f WHERE f.round = r AND f.tbl = t AND f.id = c.id AND f.token = c.token))"
	report_row "IDs whose row differs between nodes" \
		"(SELECT count(*) FROM (SELECT id FROM final_rows WHERE round = r AND tbl = t GROUP BY id HAVING count(DISTINCT token) > 1 OR count(*) < 3) x)"
	report_row "different contents among the nodes (1: all hold the same rows)" \
		"(SELECT count(DISTINCT h) FROM (SELECT seen_on, md5(string_agg(id || ':' || node || ':' || token, ',' ORDER BY id)) AS h FROM final_rows WHERE round = r AND tbl = t GROUP BY seen_on) x)"
	report_row "apply errors logged on the table, per node" \
		"(SELECT string_agg(apply_errors::text, ' / ' ORDER BY node) FROM node_stats WHERE round = r AND tbl = t)"
	echo
	psql_report -c "SELECT format('Round %s (delay %s): pgbench transactions per second per node (each two inserts) %s;'
	                              ' replication settled %s after pgbench ended; apply workers that exited (a worker exits'
	                              ' on an error it cannot resolve, and is restarted), per node: %s; subscriptions at the'
	                              ' end, per node: %s.',
	                              round, delay, replace(tps, ' ', ' / '), settled,
	                              (SELECT string_agg(worker_exits::text, ' / ' ORDER BY node) FROM node_stats s
	                                WHERE s.round = r.round AND tbl = 't_snowflake'),
	                              (SELECT string_agg(status, ' / ' ORDER BY node) FROM node_stats s
	                                WHERE s.round = r.round AND tbl = 't_snowflake'))
	                  FROM rounds r ORDER BY round" | sed 's/$/\n/'
} | tee "$OUT/active_active.md"
say "Wrote $OUT/active_active.md"
