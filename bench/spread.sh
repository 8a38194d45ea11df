#!/usr/bin/env bash
# bench/spread.sh - the low bits of IDs under each snowflake.sequence_start
# (zero, spread): how evenly id % 16 and id % 1024 spread at 1, 100 and
# 10,000 IDs/s, and bulk generation under each mode, side by side in one run.
#
# usage: bash bench/spread.sh [--pg MAJOR]
#
#   --pg MAJOR   benchmark that PostgreSQL major (default: the host's); a
#                major the host does not package runs in the same Debian
#                root as scripts/test.sh, like bench/run.sh
#
# PG_CONFIG=/path/to/pg_config (without --pg) builds, installs and runs
# against that PostgreSQL instead of the host's packaged one.
#
# Measures, in two throwaway clusters:
#   1. Evenness, in a cluster whose clock libfaketime sets: for each mode and
#      each rate, SPREAD_N IDs (16384: 16 per residue of 1024) at Poisson
#      arrival times of that rate, from one session.  Before each call the
#      session pins the server's clock to the call's arrival time (an
#      absolute time in the clock file, which the server rereads at every
#      clock reading), so "1 ID/s" takes seconds, not hours, and both modes
#      get the same arrival times (the same seed).  Plus pairs at 100/s (a
#      row and the row its trigger writes, in one millisecond), where the
#      first ID of each pair counts.  Reported for id % 16 and id % 1024:
#      the residues hit, the share of the most common residue, and the
#      chi-square against uniform per degree of freedom (near 1 for a
#      uniform random sample, 0 for a perfectly even one); and
#      snowflake_stats' borrows and largest_drift_ms over each run.
#   2. Bulk generation in a plain cluster (the real clock): SPREAD_BULK_N IDs
#      (2000000) in one statement, as snowflake_nextval() per row and as
#      snowflake_nextval(n), under each mode, SPREAD_REPS (5) times, the four
#      taking turns, the mode switched by a reload before each; the median.
#   3. Instructions per ID, counted by callgrind in a single-user backend of
#      that cluster, under each mode (SPREAD_CALLGRIND_N calls, 100000).
# Prints a markdown report and writes it to BENCH_OUT (bench/out)/spread.md.
# Internal: --here runs on this system (the host, or inside a root).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"

usage="usage: bench/spread.sh [--pg MAJOR]"
major=
here=
while [ $# -gt 0 ]; do
	case $1 in
		--pg) [ $# -ge 2 ] || die "$usage"; major=$2; shift 2 ;;
		--here) here=1; shift ;;
		*) die "$usage" ;;
	esac
done

N=${SPREAD_N:-16384}
BULK_N=${SPREAD_BULK_N:-2000000}
REPS=${SPREAD_REPS:-5}
CG_N=${SPREAD_CALLGRIND_N:-100000}
for v in "$N" "$BULK_N" "$REPS" "$CG_N"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || die "SPREAD_N, SPREAD_BULK_N, SPREAD_REPS and SPREAD_CALLGRIND_N take whole numbers, not '$v'"
done

bench_target spread.sh "$major" "$here" SPREAD_N SPREAD_BULK_N SPREAD_REPS SPREAD_CALLGRIND_N
# PG_CONFIG of a PostgreSQL of its own needs only the tools
if [ -n "$BENCH_OWN_PG" ]; then
	packages=(build-essential faketime valgrind)
else
	packages=("${DEMO_PACKAGES[@]}" faketime valgrind)
fi
load_at_start=$(cut -d' ' -f1-3 /proc/loadavg)	# the machine is shared: say how busy it was
OUT=${BENCH_OUT:-$REPO/bench/out}
PORT=5442
unset PGHOST PGPORT PGUSER PGDATABASE PGOPTIONS PGSERVICE

# shellcheck disable=SC2046 # one word per package
install_packages $(packages_for "$PG_MAJOR" "${packages[@]}")
build_and_install
libfaketime=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/faketime/libfaketime.so.1
[ -e "$libfaketime" ] || die "libfaketime not found at $libfaketime"

enter_workdir spread

# psql_in DIR ...: psql as the superuser into database bench of the cluster in DIR
psql_in() {
	local dir=$1
	shift
	as_pg "$PG_BINDIR/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$dir" -p "$PORT" -d bench "$@"
}
# set_mode DIR MODE: reload snowflake.sequence_start = MODE and wait until
# new sessions see it
set_mode() {
	psql_in "$1" -c "ALTER SYSTEM SET snowflake.sequence_start = '$2'" -c "SELECT pg_reload_conf()" >/dev/null
	for _ in $(seq 100); do
		[ "$(psql_in "$1" -c 'SHOW snowflake.sequence_start')" = "$2" ] && return 0
		sleep 0.1
	done
	die "snowflake.sequence_start did not become $2 after a reload"
}

say "1. Evenness: $N IDs per mode and rate, at Poisson arrival times set on the server's clock"
FAKE=$WORK/fake
CLOCK=$FAKE/clock
as_pg mkdir "$FAKE"
cluster_create "$FAKE" "$PORT" <<EOF
shared_preload_libraries = 'snowflake'
snowflake.worker_id = 1
fsync = off
autovacuum = off
EOF
# the clock file: an offset of 0 while the server starts, then absolute times
echo "+0" | as_pg tee "$CLOCK" >/dev/null
as_pg env LD_PRELOAD="$libfaketime" FAKETIME_TIMESTAMP_FILE="$CLOCK" FAKETIME_NO_CACHE=1 \
	FAKETIME_DONT_FAKE_MONOTONIC=1 FAKETIME_NO_SHM=1 TZ=UTC \
	"$PG_BINDIR/pg_ctl" -D "$FAKE/data" -l "$FAKE/server.log" -w -s start ||
	{ cat "$FAKE/server.log"; die "the server did not start under libfaketime"; }
as_pg "$PG_BINDIR/createdb" -h "$FAKE" -p "$PORT" bench
psql_in "$FAKE" <<EOF
CREATE EXTENSION snowflake;
CREATE TABLE runs (run int PRIMARY KEY, mode text, rate int, per int, n int,
	borrows bigint, largest_drift_ms bigint);
CREATE TABLE ids (run int, n int, id bigint, PRIMARY KEY (run, n));

-- Pin the server's clock at t: libfaketime reads an absolute time in the
-- file at every clock reading (in UTC: the server runs with TZ=UTC).  The
-- file is rewritten in place, so another process may read it half-written
-- and take the real time for once; this session reads it only after it was
-- written, and only its calls issue IDs.
CREATE FUNCTION set_clock(t timestamptz) RETURNS void LANGUAGE plpgsql AS \$\$
BEGIN
	EXECUTE format('COPY (SELECT %L) TO %L',
				   to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US'), '$CLOCK');
END \$\$;

-- Run r: n IDs in groups of "per" (one call after another at the same
-- instant), the groups arriving at "rate" per second as a Poisson process
-- from "start" (seeded, so every mode gets the same arrivals).  Returns the
-- last arrival.
CREATE FUNCTION issue_at(r int, rate int, per int, n int, start timestamptz) RETURNS timestamptz
LANGUAGE plpgsql AS \$\$
DECLARE
	t timestamptz := start;
	k int := 0;
BEGIN
	PERFORM setseed(0.26);
	FOR g IN 1 .. n / per LOOP
		t := t + make_interval(secs => -ln(1 - random()) / rate);
		PERFORM set_clock(t);
		FOR j IN 1 .. per LOOP
			k := k + 1;
			INSERT INTO ids VALUES (r, k, snowflake_nextval());
		END LOOP;
	END LOOP;
	RETURN t;
END \$\$;
EOF

# The runs: every mode at every rate, then the pairs, each from an instant
# past the last run's (the fake clock only moves forward), in 2025: the
# layout's lifetime, and before the real time, so no mark gets ahead of it.
start="2025-06-01 00:00:00+00"
run=0
for spec in 1:1 100:1 10000:1 100:2; do
	IFS=: read -r rate per <<<"$spec"
	for mode in zero spread; do
		run=$((run + 1))
		set_mode "$FAKE" "$mode"
		psql_in "$FAKE" -c "SELECT snowflake_stats_reset()" >/dev/null
		t0=$(date +%s.%N)
		start=$(psql_in "$FAKE" -c "SELECT date_trunc('second', issue_at($run, $rate, $per, $N, '$start')) + interval '2 s'")
		psql_in "$FAKE" -c "INSERT INTO runs SELECT $run, '$mode', $rate, $per, $N, borrows, largest_drift_ms FROM snowflake_stats"
		printf '    %-6s %5d/s%s: %d IDs in %.1f s\n' "$mode" "$rate" "$([ "$per" = 1 ] || echo " in groups of $per")" \
			"$N" "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')"
	done
done
echo "+0" | as_pg tee "$CLOCK" >/dev/null
evenness=$(psql_in "$FAKE" <<'EOF'
-- the first ID of each group, by run
CREATE TEMP VIEW sample AS
	SELECT i.run, i.id FROM ids i JOIN runs r USING (run) WHERE (i.n - 1) % r.per = 0;
CREATE TEMP VIEW residues AS
	SELECT s.run, m.m, s.id % m.m AS res, count(*) AS c
	  FROM sample s, (VALUES (16), (1024)) AS m(m) GROUP BY 1, 2, 3;
-- per run and modulus: residues hit, the most common one's share, and the
-- chi-square per degree of freedom (an empty residue adds its expectation)
CREATE TEMP VIEW spread AS
	SELECT x.run, x.m, count(*) AS hit, max(x.c)::float8 / t.total AS top,
	       (sum((x.c - t.total::float8 / x.m) ^ 2 / (t.total::float8 / x.m))
	        + (x.m - count(*)) * t.total::float8 / x.m) / (x.m - 1) AS chi2_df
	  FROM residues x JOIN (SELECT run, count(*) AS total FROM sample GROUP BY run) t USING (run)
	 GROUP BY x.run, x.m, t.total;
SELECT format('| %s | `%s` | %s %% | %s | %s | %s %% | %s | %s | %s |',
		CASE WHEN r.per > 1 THEN r.rate || ' pairs/s, first of each'
		     WHEN r.rate = 1 THEN '1 ID/s'
		     ELSE to_char(r.rate, 'FM999,999') || ' IDs/s' END,
		r.mode,
		round(100 * a.top::numeric, 2), round(a.chi2_df::numeric, 2),
		b.hit, round(100 * b.top::numeric, 3), round(b.chi2_df::numeric, 2),
		r.borrows, r.largest_drift_ms)
  FROM runs r JOIN spread a ON a.run = r.run AND a.m = 16
  JOIN spread b ON b.run = r.run AND b.m = 1024
 ORDER BY r.run;
EOF
)
cluster_stop "$FAKE"

say "2. Bulk generation: $BULK_N IDs in one statement under each mode, $REPS times"
BULK=$WORK/bulk
as_pg mkdir "$BULK"
cluster_create "$BULK" "$PORT" <<EOF
shared_preload_libraries = 'snowflake'
snowflake.worker_id = 1
autovacuum = off
EOF
cluster_start "$BULK"
as_pg "$PG_BINDIR/createdb" -h "$BULK" -p "$PORT" bench
psql_in "$BULK" <<'EOF'
CREATE EXTENSION snowflake;
CREATE TABLE results (form text, mode text, rep int, ms float8);
-- the wall-clock time of one statement in ms, measured in the server
CREATE FUNCTION time_ms(q text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE
	t0 timestamptz := clock_timestamp();
BEGIN
	EXECUTE q;
	RETURN extract(epoch FROM clock_timestamp() - t0) * 1000;
END $$;
-- wait until the generator's logical clock is back at the wall clock, so
-- that a measurement does not start with time borrowed by the one before
CREATE FUNCTION settle() RETURNS void LANGUAGE sql AS $$
	SELECT pg_sleep(drift_ms / 1000.0 + 0.01) FROM snowflake_stats
$$;
EOF
forms=("snowflake_nextval() per row" "snowflake_nextval(n)")
form_sql=("SELECT count(snowflake_nextval()) FROM generate_series(1, $BULK_N)"
	"SELECT count(*) FROM snowflake_nextval($BULK_N)")
modes=(zero spread)
for rep in $(seq "$REPS"); do
	for k in $(seq 0 3); do
		i=$(((k + rep) % 4))
		form=$((i / 2))
		mode=${modes[$((i % 2))]}
		set_mode "$BULK" "$mode"
		ms=$(psql_in "$BULK" -c "SELECT settle()" -c "SELECT time_ms(\$q\$${form_sql[$form]}\$q\$)" | tail -n 1)
		psql_in "$BULK" -c "INSERT INTO results VALUES ('${forms[$form]}', '$mode', $rep, $ms)"
		printf '    rep %s  %-28s %-6s %8.1f ms\n' "$rep" "${forms[$form]}" "$mode" "$ms"
	done
done
bulk=$(psql_in "$BULK" <<EOF
SELECT format('| %s | %s | %s | %s | %s | %sx |', z.form,
		round(z.med::numeric, 1), round(s.med::numeric, 1),
		round((z.med * 1e6 / $BULK_N)::numeric, 1), round((s.med * 1e6 / $BULK_N)::numeric, 1),
		round((s.med / z.med)::numeric, 3))
  FROM (SELECT form, mode, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS med
          FROM results GROUP BY form, mode) z
  JOIN (SELECT form, mode, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS med
          FROM results GROUP BY form, mode) s ON s.form = z.form AND s.mode = 'spread'
 WHERE z.mode = 'zero'
 ORDER BY z.form;
EOF
)
bulk_all=$(psql_in "$BULK" -c "SELECT string_agg(format('%s, %s: %s', form, mode, ms_list), '; ' ORDER BY form, mode DESC)
	FROM (SELECT form, mode, string_agg(round(ms::numeric)::text, ', ' ORDER BY rep) AS ms_list FROM results GROUP BY form, mode) s")
cluster_stop "$BULK"

say "3. Instructions per ID (callgrind, $CG_N calls, single-user backend)"
cg_runs=(
	"snowflake_nextval() per row|SELECT count(snowflake_nextval()) FROM generate_series(1, $CG_N)|snowflake_nextval"
	"snowflake_nextval(n)|SELECT count(*) FROM snowflake_nextval($CG_N)|snowflake_nextval_batch"
)
callgrind=
for run in "${cg_runs[@]}"; do
	IFS='|' read -r name sql func <<<"$run"
	line="| $name"
	for mode in "${modes[@]}"; do
		out=$WORK/callgrind.$mode.$func.out
		echo "$sql" | as_pg valgrind --tool=callgrind --callgrind-out-file="$out" \
			"$PG_BINDIR/postgres" --single -D "$BULK/data" -c snowflake.sequence_start="$mode" bench \
			>"$WORK/callgrind.log" 2>&1 ||
			{ tail -n 20 "$WORK/callgrind.log"; die "callgrind failed on: $sql"; }
		total=$(inclusive "$func" "$out")
		[ -n "$total" ] || die "callgrind counted nothing for $func"
		per_id=$(awk -v t="$total" -v n="$CG_N" 'BEGIN { printf "%.1f", t / n }')
		printf '    %-28s %-6s %8s instructions per ID\n' "$name" "$mode" "$per_id"
		line="$line | $per_id"
	done
	callgrind="$callgrind$line |"$'\n'
done

say "Report"
mkdir -p "$OUT"
{
	echo "# snowflake: the low bits of IDs under each snowflake.sequence_start"
	echo
	echo "Run $(date -u '+%Y-%m-%d %H:%M UTC') by \`bash bench/spread.sh\` on $(nproc) cores" \
		"($(lscpu | sed -n 's/^Model name: *//p' | head -n 1)), Linux $(uname -r)," \
		"$("$PG_BINDIR/postgres" --version | sed 's/^postgres (PostgreSQL) /PostgreSQL /')," \
		"the default layout (12 sequence bits, worker id 1)."
	echo "Load average (1, 5, 15 min) at the start: $load_at_start; at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
	echo
	echo "## How evenly the low bits spread"
	echo
	echo "$N IDs per row, one session, at Poisson arrival times of the rate; the server's clock is pinned" \
		"to each arrival time before the call (libfaketime), so both modes get the same arrivals." \
		"Pairs: two IDs at each arrival (a row and the row its trigger writes); the first of each pair" \
		"counts. An even spread gives every residue 6.25 % of \`id % 16\` and 0.098 % of" \
		"\`id % 1024\`; χ²/df is the chi-square against uniform per degree of freedom, about 1 (± 0.37" \
		"for 16 residues, ± 0.04 for 1024) for a uniform random sample. Borrows and the largest drift" \
		"are snowflake_stats' over the row."
	echo
	echo "| rate | mode | \`id % 16\`: most common | \`id % 16\`: χ²/df | \`id % 1024\`: residues hit | \`id % 1024\`: most common | \`id % 1024\`: χ²/df | borrows | largest drift (ms) |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
	echo "$evenness"
	echo
	echo "## Bulk generation"
	echo
	echo "$BULK_N IDs in one statement, the real clock, $REPS repetitions taking turns (the mode set by a" \
		"reload before each); the median."
	echo
	echo "| form | zero, ms | spread, ms | zero, ns per ID | spread, ns per ID | spread / zero |"
	echo "|---|---:|---:|---:|---:|---:|"
	echo "$bulk"
	echo
	echo "Every repetition (ms): $bulk_all."
	echo
	echo "Instructions per ID, callgrind, $CG_N calls in one statement in a single-user backend" \
		"(inclusive count of the SQL function):"
	echo
	echo "| form | zero | spread |"
	echo "|---|---:|---:|"
	printf '%s' "$callgrind"
} | tee "$OUT/spread.md"
say "Wrote $OUT/spread.md"
