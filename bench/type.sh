#!/usr/bin/env bash
# bench/type.sh - a key of the column type snowflake beside a bigint key, in
# one throwaway cluster, in one run: what the type costs.
#
# usage: bash bench/type.sh [--pg MAJOR]
#
#   --pg MAJOR   benchmark that PostgreSQL major (default: the host's); a
#                major the host does not package runs in the same Debian
#                root as scripts/test.sh, like bench/run.sh
#
# PG_CONFIG=/path/to/pg_config (without --pg) builds, installs and runs
# against that PostgreSQL instead of the host's packaged one.
#
# Two tables that differ only in the key's type, "id snowflake" and "id
# bigint", each PRIMARY KEY DEFAULT snowflake_nextval(), and two lookup
# tables holding the same LOOKUP_ROWS keys.  Each repetition measures, the
# two taking turns (the first one alternates, so that a slow patch of a
# shared machine hits them alike):
#   1. INSERT ... SELECT of INSERT_ROWS rows into the empty table (after a
#      CHECKPOINT), and then its table and index sizes;
#   2. pgbench -M prepared, single-row INSERTs, BENCH_SECONDS per run, at
#      each client count of BENCH_CLIENTS (a CHECKPOINT before each run);
#   3. pgbench -M prepared, primary-key lookups of random existing keys
#      ("WHERE id = $1", a parameter pgbench sends untyped, as drivers do).
# Then, once, instructions per row, counted by callgrind in a single-user
# backend of a second cluster (deterministic, unlike the timings on a
# shared machine): an INSERT ... SELECT of BENCH_CALLGRIND_N rows into each
# empty table, and BENCH_CALLGRIND_N primary-key lookups (a nested loop of
# index scans), charged to standard_ExecutorRun.
# Reports the median of the repetitions, the ratio snowflake / bigint of the
# medians, the median of the ratios within each repetition (where the two ran
# one right after the other, so that a slow patch of the machine cancels
# out), and how far apart the repetitions were.  Settings as
# bench/run.sh: synchronous_commit = off, fsync on, autovacuum off.
#
# Environment: BENCH_REPS (5); BENCH_SECONDS (5) per pgbench run;
# BENCH_CLIENTS ("1 2"); BENCH_INSERT_ROWS (1000000); BENCH_LOOKUP_ROWS
# (1000000); BENCH_CALLGRIND_N (100000); BENCH_OUT (bench/out), where
# type.md and type.csv go.
# Internal: --here runs on this system (the host, or inside a root).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"

usage="usage: bash bench/type.sh [--pg MAJOR]"
major=
here=
while [ $# -gt 0 ]; do
	case $1 in
		--pg) [ $# -ge 2 ] || die "$usage"; major=$2; shift 2 ;;
		--here) here=1; shift ;;
		*) die "$usage" ;;
	esac
done

bench_target type.sh "$major" "$here" BENCH_REPS BENCH_SECONDS BENCH_CLIENTS \
	BENCH_INSERT_ROWS BENCH_LOOKUP_ROWS BENCH_CALLGRIND_N
# PG_CONFIG of a PostgreSQL of its own needs only the compiler and valgrind
if [ -n "$BENCH_OWN_PG" ]; then
	packages=(build-essential valgrind)
else
	packages=("${DEMO_PACKAGES[@]}" valgrind)
fi
load_at_start=$(cut -d' ' -f1-3 /proc/loadavg)	# the machine is shared: say how busy it was
REPS=${BENCH_REPS:-5}
SECS=${BENCH_SECONDS:-5}
CLIENTS=${BENCH_CLIENTS:-"1 2"}
INSERT_ROWS=${BENCH_INSERT_ROWS:-1000000}
LOOKUP_ROWS=${BENCH_LOOKUP_ROWS:-1000000}
CG_N=${BENCH_CALLGRIND_N:-100000}
OUT=${BENCH_OUT:-$REPO/bench/out}
PORT=5442
unset PGHOST PGPORT PGUSER PGDATABASE PGOPTIONS PGSERVICE

# shellcheck disable=SC2046 # one word per package
install_packages $(packages_for "$PG_MAJOR" "${packages[@]}")
build_and_install

enter_workdir type

say "Creating the benchmark cluster in $WORK (runs as $(pg_user))"
cluster_create "$WORK" "$PORT" <<EOF
shared_preload_libraries = 'snowflake'
snowflake.worker_id = 1
shared_buffers = 512MB
synchronous_commit = off
autovacuum = off
max_wal_size = 16GB
checkpoint_timeout = 1h
EOF
cluster_start "$WORK"

as_pg "$PG_BINDIR/createdb" -h "$WORK" -p "$PORT" bench
# The keys of the lookup tables: one per millisecond of ID time, worker 1,
# sequence 0, so that pgbench can make a random existing one.
psql_bench -v rows="$LOOKUP_ROWS" <<'EOF'
CREATE EXTENSION snowflake;
CREATE TABLE ins_bigint (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), v int);
CREATE TABLE ins_snowflake (id snowflake PRIMARY KEY DEFAULT snowflake_nextval(), v int);
CREATE TABLE look_bigint (id bigint PRIMARY KEY, v int);
CREATE TABLE look_snowflake (id snowflake PRIMARY KEY, v int);
INSERT INTO look_bigint SELECT (g::bigint << 22) | 4096, g FROM generate_series(0, :rows - 1) g;
INSERT INTO look_snowflake SELECT id, v FROM look_bigint;
VACUUM ANALYZE look_bigint, look_snowflake;
CREATE TABLE results (section text, name text, clients int, rep int, metric text, value float8);
CREATE FUNCTION time_ms(q text) RETURNS float8
LANGUAGE plpgsql AS $$
DECLARE
	t0	timestamptz := clock_timestamp();
BEGIN
	EXECUTE q;
	RETURN extract(epoch FROM clock_timestamp() - t0) * 1000;
END
$$;
EOF

# record SECTION NAME CLIENTS REP METRIC VALUE
record() {
	psql_bench -c "INSERT INTO results VALUES ('$1', '$2', $3, $4, '$5', $6)"
}

# tps CLIENTS SCRIPT: run SCRIPT with pgbench, print transactions/s.
tps() {
	local script out
	script=$(mktemp "$WORK/script.XXXXXX.sql")
	echo "$2" >"$script"
	is_root && chown postgres "$script"
	out=$(as_pg "$PG_BINDIR/pgbench" -h "$WORK" -p "$PORT" -n -M prepared \
		-T "$SECS" -c "$1" -j "$1" -f "$script" bench 2>&1) ||
		{ echo "$out" >&2; die "pgbench failed: $2"; }
	rm -f "$script"
	out=$(echo "$out" | sed -n 's/^tps = \([0-9.]*\) .*/\1/p')
	[ -n "$out" ] || die "pgbench printed no tps for: $2"
	echo "$out"
}

names=(bigint snowflake)
for rep in $(seq "$REPS"); do
	# the first of the two alternates with each repetition
	order=("${names[@]}")
	[ $((rep % 2)) -eq 1 ] || order=(snowflake bigint)
	say "Repetition $rep of $REPS"
	for name in "${order[@]}"; do
		psql_bench -c "TRUNCATE ins_$name" -c CHECKPOINT
		ms=$(psql_bench -c "SELECT time_ms(\$q\$INSERT INTO ins_$name (v) SELECT g FROM generate_series(1, $INSERT_ROWS) g\$q\$)")
		record insert_select "$name" 1 "$rep" ms "$ms"
		psql_bench -c "INSERT INTO results
			SELECT 'insert_select', '$name', 1, $rep, m, v
			  FROM (VALUES ('table_bytes', pg_table_size('ins_$name')),
			               ('index_bytes', pg_relation_size('ins_${name}_pkey'))) x(m, v)"
		printf '    %-9s INSERT ... SELECT of %s rows: %8.0f ms\n' "$name" "$INSERT_ROWS" "$ms"
	done
	for c in $CLIENTS; do
		for name in "${order[@]}"; do
			psql_bench -c CHECKPOINT
			t=$(tps "$c" "INSERT INTO ins_$name (v) VALUES (1);")
			record insert "$name" "$c" "$rep" tps "$t"
			printf '    %-9s single-row INSERT, %d client(s): %10.0f tps\n' "$name" "$c" "$t"
		done
		for name in "${order[@]}"; do
			t=$(tps "$c" "\\set id random(0, $LOOKUP_ROWS - 1) * 4194304 + 4096
SELECT v FROM look_$name WHERE id = :id;")
			record lookup "$name" "$c" "$rep" tps "$t"
			printf '    %-9s primary-key lookup, %d client(s): %10.0f tps\n' "$name" "$c" "$t"
		done
	done
done

say "Instructions per row (callgrind, $CG_N rows, single-user backend)"
CG=$WORK/cg
as_pg mkdir "$CG"
cluster_create "$CG" "$PORT" <<EOF
shared_preload_libraries = 'snowflake'
snowflake.worker_id = 1
EOF
# single SQL [CALLGRIND_OUT]: run the lines of SQL in one single-user backend
# of the callgrind cluster, under callgrind if CALLGRIND_OUT is given
single() {
	local tool=()
	[ -z "${2:-}" ] || tool=(valgrind --tool=callgrind --callgrind-out-file="$2")
	echo "$1" | as_pg "${tool[@]}" "$PG_BINDIR/postgres" --single -D "$CG/data" postgres \
		>"$WORK/single.log" 2>&1 || { tail -n 20 "$WORK/single.log"; die "single-user backend failed: $1"; }
	! grep -q ERROR "$WORK/single.log" || { grep ERROR "$WORK/single.log"; die "an error in: $1"; }
}
single "CREATE EXTENSION snowflake
CREATE TABLE ins_bigint (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), v int)
CREATE TABLE ins_snowflake (id snowflake PRIMARY KEY DEFAULT snowflake_nextval(), v int)
CREATE TABLE look_bigint (id bigint PRIMARY KEY, v int)
CREATE TABLE look_snowflake (id snowflake PRIMARY KEY, v int)
INSERT INTO look_bigint SELECT (g::bigint << 22) | 4096, g FROM generate_series(0, $CG_N - 1) g
INSERT INTO look_snowflake SELECT id, v FROM look_bigint
VACUUM ANALYZE look_bigint
VACUUM ANALYZE look_snowflake"
for name in "${names[@]}"; do
	for what in insert lookup; do
		out=$WORK/callgrind.$what.$name.out
		if [ "$what" = insert ]; then
			single "INSERT INTO ins_$name (v) SELECT g FROM generate_series(1, $CG_N) g" "$out"
			label="INSERT ... SELECT"
		else
			single "SET enable_hashjoin = off
SET enable_mergejoin = off
SELECT count(s.v) FROM generate_series(0, $CG_N - 1) g, LATERAL (SELECT v FROM look_$name WHERE id = (g::bigint << 22) | 4096) s" "$out"
			label="primary-key lookup"
		fi
		total=$(inclusive standard_ExecutorRun "$out")
		[ -n "$total" ] || die "callgrind counted nothing for standard_ExecutorRun ($what, $name)"
		per_row=$(awk -v t="$total" -v n="$CG_N" 'BEGIN { printf "%.1f", t / n }')
		record "callgrind_$what" "$name" 1 1 instructions "$per_row"
		printf '    %-9s %-18s %8.0f instructions per row\n' "$name" "$label" "$per_row"
	done
done

say "Report"
mkdir -p "$OUT"
{
	echo "# A snowflake key beside a bigint key"
	echo
	echo "Run $(date -u '+%Y-%m-%d %H:%M UTC') by \`bash bench/type.sh\` on $(nproc) cores" \
		"($(lscpu | sed -n 's/^Model name: *//p' | head -n 1)), Linux $(uname -r)," \
		"$("$PG_BINDIR/postgres" --version | sed 's/^postgres (PostgreSQL) /PostgreSQL /')."
	echo "Load average (1, 5, 15 min) when the run started: $load_at_start."
	echo "Settings: $REPS repetitions (medians shown), pgbench runs of $SECS s, INSERT ... SELECT" \
		"of $INSERT_ROWS rows, lookups among $LOOKUP_ROWS keys; shared_buffers = 512MB," \
		"synchronous_commit = off, fsync on, autovacuum off."
	echo
	psql_bench <<'EOF'
-- per measurement: the medians, their ratio, the median of the ratios
-- within each repetition, and the spread of the repetitions of each
-- ((max - min) / median)
WITH paired AS (
	SELECT section, clients, metric,
	       percentile_cont(0.5) WITHIN GROUP (ORDER BY s.value / nullif(b.value, 0)) AS ratio
	  FROM results b JOIN results s USING (section, clients, metric, rep)
	 WHERE b.name = 'bigint' AND s.name = 'snowflake'
	 GROUP BY section, clients, metric
), m AS (
	SELECT section, clients, metric, name,
	       percentile_cont(0.5) WITHIN GROUP (ORDER BY value) AS med,
	       (max(value) - min(value)) / nullif(percentile_cont(0.5) WITHIN GROUP (ORDER BY value), 0) AS spread
	  FROM results GROUP BY section, clients, metric, name
), rows AS (
	SELECT CASE b.section || '/' || b.metric
	            WHEN 'insert_select/ms' THEN 'INSERT ... SELECT, ms'
	            WHEN 'insert_select/table_bytes' THEN 'table size after it, bytes'
	            WHEN 'insert_select/index_bytes' THEN 'primary-key index size after it, bytes'
	            WHEN 'insert/tps' THEN format('single-row INSERT, %s client%s, tps', b.clients,
	                                          CASE b.clients WHEN 1 THEN '' ELSE 's' END)
	            WHEN 'lookup/tps' THEN format('primary-key lookup, %s client%s, tps', b.clients,
	                                          CASE b.clients WHEN 1 THEN '' ELSE 's' END)
	            WHEN 'callgrind_insert/instructions' THEN 'INSERT ... SELECT, instructions per row (callgrind)'
	            WHEN 'callgrind_lookup/instructions' THEN 'primary-key lookup, instructions per row (callgrind)'
	       END AS what,
	       CASE b.section || '/' || b.metric
	            WHEN 'insert_select/ms' THEN 0 WHEN 'insert_select/table_bytes' THEN 1
	            WHEN 'insert_select/index_bytes' THEN 2 WHEN 'insert/tps' THEN 3
	            WHEN 'lookup/tps' THEN 4 WHEN 'callgrind_insert/instructions' THEN 5 ELSE 6
	       END AS k,
	       b.clients, b.med AS bigint_med, s.med AS snowflake_med,
	       s.med / nullif(b.med, 0) AS ratio, p.ratio AS paired,
	       greatest(b.spread, s.spread) AS spread
	  FROM m b JOIN m s USING (section, clients, metric)
	  JOIN paired p USING (section, clients, metric)
	 WHERE b.name = 'bigint' AND s.name = 'snowflake'
)
SELECT line FROM (
	SELECT -2 AS k, 0 AS clients,
	       '| measurement | bigint key | snowflake key | snowflake / bigint | ... within each repetition | spread of the repetitions |' AS line
	UNION ALL
	SELECT -1, 0, '|---|---:|---:|---:|---:|---:|'
	UNION ALL
	SELECT k, clients,
	       format('| %s | %s | %s | %s | %s | %s |', what,
	              to_char(round(bigint_med), 'FM999,999,999,990'),
	              to_char(round(snowflake_med), 'FM999,999,999,990'),
	              to_char(round(ratio::numeric, 3), 'FM990.000'),
	              to_char(round(paired::numeric, 3), 'FM990.000'),
	              to_char(round(100 * spread::numeric), 'FM990') || ' %')
	  FROM rows) t
 ORDER BY k, clients;
EOF
} | tee "$OUT/type.md"
psql_bench -c "\copy (SELECT * FROM results ORDER BY section, clients, rep, metric, name) TO STDOUT WITH (FORMAT csv, HEADER)" \
	>"$OUT/type.csv"
say "Wrote $OUT/type.md and $OUT/type.csv"
