#!/usr/bin/env bash
# bench/latency.sh - single-row INSERT latency at steady, light rates, with
# PostgreSQL's default durability (fsync = on, synchronous_commit = on):
# a table keyed by snowflake_nextval() beside one keyed by bigserial and one
# keyed by gen_random_uuid(), interleaved in one run.
# The options are in usage() below.
#
# Measures, in one throwaway cluster (unix socket only, PostgreSQL's default
# settings apart from loading snowflake):
#   1. pgbench --rate with three equally weighted scripts, one INSERT INTO t
#      (v) VALUES (1) per transaction into each of the three tables, so each
#      transaction picks a competitor at random and a slow patch of a shared
#      machine hits all three alike.  A rate is inserts per second into EACH
#      table (pgbench runs at three times that), over all clients.  Latency
#      is pgbench's per-transaction time minus its schedule lag: the time
#      from sending the INSERT to its acknowledged, fsynced commit.
#   2. the first INSERT after the server sat idle, measured by psql's
#      \timing in one open session that sleeps between inserts, each
#      competitor after an idle period of its own.
# and snowflake_stats' counters of marks (durable writes of the mark that
# IDs may not pass) against the IDs issued during each rate.
#
# Environment: LATENCY_RUNS, the runs as CLIENTS:RATE:SECONDS words
# (default "1:1:150 1:10:30 1:100:10 1:1000:6 4:400:8 4:1000:6", RATE per
# table over all clients); LATENCY_IDLE_REPS (2) first calls after idle per
# competitor; BENCH_OUT (bench/out) where the report goes.
# Internal: --here runs on this system (the host, or inside a root).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"

usage() {
	cat >&2 <<'EOF'
usage: bash bench/latency.sh [--quick] [--idle SECONDS] [--pg MAJOR]

  --quick         a short smoke run (a few seconds per rate, 3 s idle)
  --idle SECONDS  how long the server sits idle before each "first call after
                  idle" (default 60)
  --pg MAJOR      benchmark that PostgreSQL major (default: the host's); a
                  major the host does not package runs in the same Debian root
                  as scripts/test.sh, like bench/run.sh

PG_CONFIG=/path/to/pg_config (without --pg) builds, installs and runs against
that PostgreSQL instead of the host's packaged one.
EOF
	exit 2
}
major=
here=
quick=
idle=
while [ $# -gt 0 ]; do
	case $1 in
		--pg) [ $# -ge 2 ] || usage; major=$2; shift 2 ;;
		--idle) [ $# -ge 2 ] || usage; idle=$2; shift 2 ;;
		--quick) quick=1; shift ;;
		--here) here=1; shift ;;
		*) usage ;;
	esac
done
[ -z "$idle" ] || [[ $idle =~ ^[0-9]+$ ]] || die "--idle takes whole seconds, not '$idle'"

if [ -n "$quick" ]; then
	RUNS=${LATENCY_RUNS:-"1:1:10 1:10:5 1:100:3 1:1000:2 4:400:2 4:1000:2"}
	IDLE=${idle:-3}
	IDLE_REPS=${LATENCY_IDLE_REPS:-1}
else
	RUNS=${LATENCY_RUNS:-"1:1:150 1:10:30 1:100:10 1:1000:6 4:400:8 4:1000:6"}
	IDLE=${idle:-60}
	IDLE_REPS=${LATENCY_IDLE_REPS:-2}
fi
for run in $RUNS; do
	[[ $run =~ ^[1-9][0-9]*:[1-9][0-9]*:[1-9][0-9]*$ ]] ||
		die "LATENCY_RUNS: '$run' is not CLIENTS:RATE:SECONDS"
done
[[ $IDLE_REPS =~ ^[0-9]+$ ]] || die "LATENCY_IDLE_REPS must be a whole number"

args=(--idle "$IDLE")
[ -z "$quick" ] || args+=(--quick)
bench_target latency.sh "$major" "$here" LATENCY_RUNS LATENCY_IDLE_REPS -- "${args[@]}"
# PG_CONFIG of a PostgreSQL of its own needs only the compiler
if [ -n "$BENCH_OWN_PG" ]; then packages=(build-essential); else packages=("${DEMO_PACKAGES[@]}"); fi
load_at_start=$(cut -d' ' -f1-3 /proc/loadavg)	# the machine is shared: say how busy it was
OUT=${BENCH_OUT:-$REPO/bench/out}
PORT=5441
unset PGHOST PGPORT PGUSER PGDATABASE PGOPTIONS PGSERVICE

# shellcheck disable=SC2046 # one word per package
install_packages $(packages_for "$PG_MAJOR" "${packages[@]}")
build_and_install

enter_workdir latency

# Nothing about durability, checkpoints or autovacuum is changed: the
# defaults are what a new user measures.
say "Creating the benchmark cluster in $WORK (runs as $(pg_user))"
cluster_create "$WORK" "$PORT" <<EOF
shared_preload_libraries = 'snowflake'
snowflake.worker_id = 1
EOF
cluster_start "$WORK"

as_pg "$PG_BINDIR/createdb" -h "$WORK" -p "$PORT" bench
psql_bench <<'EOF'
CREATE EXTENSION snowflake;
CREATE TABLE lat_snowflake (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), v int);
CREATE TABLE lat_bigserial (id bigserial PRIMARY KEY, v int);
CREATE TABLE lat_uuid (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), v int);
-- the measurements: one row per insert (ms), one per run
CREATE TABLE lat (run int, ord int, ms float8, lag_ms float8);
CREATE TABLE runs (run int, clients int, rate int, seconds int, idle boolean,
	ids_issued bigint, marks_written bigint, extra text);
EOF
fsync=$(psql_bench -c "SHOW fsync")
sync_commit=$(psql_bench -c "SHOW synchronous_commit")
if [ "$fsync" != on ] || [ "$sync_commit" != on ]; then
	die "expected fsync = on and synchronous_commit = on, the server has $fsync and $sync_commit"
fi

tables=(lat_snowflake lat_bigserial lat_uuid)

# The counters of marks written by callers and ahead of need exist once the
# generator writes marks ahead; before that, only marks_written.
extra_cols=$(psql_bench -c "SELECT string_agg(attname, ' ' ORDER BY attnum) FROM pg_attribute
	WHERE attrelid = 'snowflake_stats'::regclass AND attname IN ('marks_by_callers', 'marks_ahead')")
# counters RUN: record snowflake_stats' counters into runs
counters() {
	local extra="concat_ws(', ', NULL::text" c
	for c in $extra_cols; do extra="$extra, '$c = ' || s.$c"; done
	psql_bench -c "UPDATE runs SET ids_issued = s.ids_issued, marks_written = s.marks_written,
		extra = $extra) FROM snowflake_stats AS s WHERE run = $1"
}

say "1. Steady rates: pgbench --rate, the three INSERTs interleaved (fsync = $fsync, synchronous_commit = $sync_commit)"
for i in "${!tables[@]}"; do
	echo "INSERT INTO ${tables[$i]} (v) VALUES (1);" >"$WORK/insert.$i.sql"
done
is_root && chown postgres "$WORK"/insert.*.sql
run=0
for spec in $RUNS; do
	IFS=: read -r clients rate secs <<<"$spec"
	run=$((run + 1))
	psql_bench -c "CHECKPOINT" -c "SELECT snowflake_stats_reset()" \
		-c "INSERT INTO runs (run, clients, rate, seconds, idle) VALUES ($run, $clients, $rate, $secs, false)" >/dev/null
	printf '    %d client(s), %d inserts/s into each table, %d s\n' "$clients" "$rate" "$secs"
	logdir=$WORK/log.$run
	as_pg mkdir "$logdir"
	as_pg "$PG_BINDIR/pgbench" -h "$WORK" -p "$PORT" -n -M prepared -c "$clients" -j "$clients" \
		-T "$secs" --rate $((rate * 3)) -l --log-prefix="$logdir/tx" \
		-f "$WORK/insert.0.sql@1" -f "$WORK/insert.1.sql@1" -f "$WORK/insert.2.sql@1" bench \
		>"$WORK/pgbench.log" 2>&1 || { cat "$WORK/pgbench.log"; die "pgbench failed"; }
	counters "$run"
	# log line: client transaction time_us script epoch_s epoch_us lag_us
	cat "$logdir"/tx.* | awk -v run="$run" '{ printf "%d\t%d\t%.3f\t%.3f\n", run, $4, ($3 - $7) / 1000, $7 / 1000 }' |
		psql_bench -c "\copy lat FROM STDIN"
done

say "2. The first INSERT after the server sat idle for $IDLE s, $IDLE_REPS time(s) per table"
run=$((run + 1))
psql_bench -c "SELECT snowflake_stats_reset()" \
	-c "INSERT INTO runs (run, clients, rate, seconds, idle) VALUES ($run, 1, 0, $IDLE, true)" >/dev/null
{
	# one warm-up insert into each table first, so that the measured ones
	# do not pay for the session's first use of the table
	printf '%s\n' '\timing on'
	for t in "${tables[@]}"; do echo "INSERT INTO $t (v) VALUES (0);"; done
	printf '%s\n' '\echo warm'
	for rep in $(seq "$IDLE_REPS"); do
		for i in "${!tables[@]}"; do
			i=$(((i + rep) % ${#tables[@]}))
			printf '\\! sleep %s\n\\echo table %s\n' "$IDLE" "$i"
			echo "INSERT INTO ${tables[$i]} (v) VALUES (1);"
		done
	done
} | psql_bench >"$WORK/idle.out"
counters "$run"
awk -v run="$run" '
	/^warm$/ { on = 1; next }
	on && /^table / { t = $2; next }
	on && /^Time: / && t != "" { printf "%d\t%d\t%s\t0\n", run, t, $2; t = "" }' "$WORK/idle.out" |
	psql_bench -c "\copy lat FROM STDIN"
[ "$(psql_bench -c "SELECT count(*) FROM lat WHERE run = $run")" -eq $((IDLE_REPS * ${#tables[@]})) ] ||
	{ cat "$WORK/idle.out"; die "psql's \\timing output did not give one time per idle insert"; }

say "Report"
mkdir -p "$OUT"
{
	echo "# snowflake: single-row INSERT latency at steady rates"
	echo
	echo "Run $(date -u '+%Y-%m-%d %H:%M UTC') by \`bash bench/latency.sh$([ -z "$quick" ] || echo ' --quick')$([ -z "$idle" ] || echo " --idle $idle")\`" \
		"on $(nproc) cores ($(lscpu | sed -n 's/^Model name: *//p' | head -n 1))," \
		"Linux $(uname -r), $("$PG_BINDIR/postgres" --version | sed 's/^postgres (PostgreSQL) /PostgreSQL /')."
	echo "Load average (1, 5, 15 min) at the start: $load_at_start; at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
	echo "PostgreSQL's defaults: fsync = $fsync, synchronous_commit = $sync_commit (every commit waits for its WAL flush)," \
		"checkpoint_timeout = $(psql_bench -c 'SHOW checkpoint_timeout'), a CHECKPOINT before each rate."
	echo
	echo "Each rate is inserts per second into EACH table, over all clients; pgbench -M prepared --rate" \
		"runs three equally weighted scripts (one single-row INSERT into one table each), so the three" \
		"competitors are interleaved at random in one run. Latency: pgbench's transaction time minus" \
		"its schedule lag, i.e. from sending the INSERT to its committed reply. Achieved: the inserts" \
		"per second into each table actually made; below the target, the clients could not keep up" \
		"(each commit waits for its fsync) and pgbench ran them back to back. n is the number of" \
		"inserts per table the percentiles rest on (a p99 of n < 100 is the maximum or near it)."
	echo "Marks: snowflake_stats over the run; a mark is a durable write (WAL flush, fsynced file," \
		"directory sync) that a call pays when its ID crosses the last mark."
	echo
	psql_bench -P footer=off <<EOF
\\pset format unaligned
\\pset tuples_only on
CREATE TEMP VIEW p AS
	SELECT run, ord, count(*) AS n,
	       percentile_disc(0.5) WITHIN GROUP (ORDER BY ms) AS p50,
	       percentile_disc(0.99) WITHIN GROUP (ORDER BY ms) AS p99,
	       max(ms) AS mx
	  FROM lat GROUP BY run, ord;
SELECT line FROM (
	SELECT 0 AS run, 0 AS k, '| clients | inserts/s per table, target | achieved | s | n per table | snowflake p50 | snowflake p99 | bigserial p50 | bigserial p99 | uuid p50 | uuid p99 | p50 snowflake/bigserial | p99 snowflake/bigserial | marks_written / ids_issued |' AS line
	UNION ALL
	SELECT 0, 1, '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |'
	UNION ALL
	SELECT r.run, 2, format('| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %sx | %sx | %s / %s%s |',
		r.clients, r.rate, round((s.n + b.n + u.n)::numeric / 3 / r.seconds, 1), r.seconds, s.n || coalesce(' (' || nullif(least(s.n, b.n, u.n), s.n) || ')', ''),
		round(s.p50::numeric, 2), round(s.p99::numeric, 2),
		round(b.p50::numeric, 2), round(b.p99::numeric, 2),
		round(u.p50::numeric, 2), round(u.p99::numeric, 2),
		round((s.p50 / b.p50)::numeric, 2), round((s.p99 / b.p99)::numeric, 2),
		r.marks_written, r.ids_issued, coalesce(nullif(', ' || r.extra, ', '), ''))
	  FROM runs r JOIN p s ON s.run = r.run AND s.ord = 0
	  JOIN p b ON b.run = r.run AND b.ord = 1 JOIN p u ON u.run = r.run AND u.ord = 2
	 WHERE NOT r.idle
) AS x ORDER BY run, k;
\\echo
\\echo 'Latency in ms. Maximum per table and run (ms):'
\\echo
SELECT line FROM (
	SELECT 0 AS run, 0 AS k, '| clients | inserts/s per table | snowflake max | bigserial max | uuid max |' AS line
	UNION ALL SELECT 0, 1, '| ---: | ---: | ---: | ---: | ---: |'
	UNION ALL
	SELECT r.run, 2, format('| %s | %s | %s | %s | %s |', r.clients, r.rate,
		round(s.mx::numeric, 2), round(b.mx::numeric, 2), round(u.mx::numeric, 2))
	  FROM runs r JOIN p s ON s.run = r.run AND s.ord = 0
	  JOIN p b ON b.run = r.run AND b.ord = 1 JOIN p u ON u.run = r.run AND u.ord = 2
	 WHERE NOT r.idle
) AS x ORDER BY run, k;
\\echo
\\echo '## The first INSERT after the server sat idle for $IDLE s'
\\echo
\\echo 'Measured by psql''s \\\\timing (client side, unix socket) in one session that sleeps between inserts, after a warm-up insert into each table; each table after an idle period of its own ($IDLE_REPS per table).'
\\echo
SELECT line FROM (
	SELECT 0 AS ord, '| key | each first insert (ms) | median (ms) |' AS line
	UNION ALL SELECT 0, '| --- | ---: | ---: |'
	UNION ALL
	SELECT l.ord + 1, format('| %s | %s | %s |', (ARRAY['\`DEFAULT snowflake_nextval()\`', '\`bigserial\`', '\`DEFAULT gen_random_uuid()\`'])[l.ord + 1],
		string_agg(round(l.ms::numeric, 2)::text, ', '),
		round((percentile_cont(0.5) WITHIN GROUP (ORDER BY l.ms))::numeric, 2))
	  FROM lat l JOIN runs r ON r.run = l.run AND r.idle GROUP BY l.ord
) AS x ORDER BY ord;
\\echo
SELECT format('Marks during the idle measurement: marks_written = %s for ids_issued = %s (the warm-up inserts included)%s.',
	marks_written, ids_issued, coalesce(nullif(', ' || extra, ', '), '')) FROM runs WHERE idle;
EOF
} | tee "$OUT/latency.md"
say "Wrote $OUT/latency.md"
