#!/usr/bin/env bash
# bench/run.sh - snowflake_nextval() side by side with what users would use
# instead (sequences, gen_random_uuid()), in one throwaway cluster, in one run.
# The options are in usage() below.
#
# Installs what is missing (Debian packages, through sudo when not root),
# builds and installs the extension, starts its own cluster (as the postgres
# user when run as root), and measures:
#   1. bulk generation in one statement, SELECT count(f()) FROM
#      generate_series(1, N), for snowflake_nextval(), nextval() without and
#      with a cache, gen_random_uuid(), uuidv7() (PostgreSQL 18 and later)
#      and clock_timestamp() (the floor of a function call), and the batch
#      form snowflake_nextval(N);
#   2. pgbench -M prepared running SELECT f() at 1, 2, 4 and 8 clients;
#   3. pgbench single-row INSERTs into tables whose primary key defaults to
#      snowflake_nextval(), bigserial, gen_random_uuid() and (18 and later)
#      uuidv7(), at the same client
#      counts; INSERT ... SELECT of a million rows into each; table and index
#      sizes;
#   4. bursts above the layout's ceiling (2^sequence_bits IDs per ms);
#   5. instructions per call, counted by callgrind in a single-user backend
#      (deterministic, unlike the timings).
# Each timing is repeated BENCH_REPS times, the competitors taking turns
# within each repetition so that a slow patch of a shared machine hits them
# alike, and the median is reported.  Prints a markdown report and writes it
# (report.md), the raw numbers (raw.csv) and a chart (chart.png) to
# BENCH_OUT.
#
# Environment: BENCH_N (2000000) IDs per bulk statement; BENCH_REPS (3);
# BENCH_SECONDS (5) per pgbench run; BENCH_CLIENTS ("1 2 4 8");
# BENCH_INSERT_ROWS (1000000); BENCH_BURST (10000000) IDs per burst;
# BENCH_CALLGRIND_N (100000) calls counted by callgrind; BENCH_OUT (bench/out).
# Internal: --here runs on this system (the host, or inside a root).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"

usage() {
	cat >&2 <<'EOF'
usage: bash bench/run.sh [--pg MAJOR]
       bash bench/run.sh --publish [--pg MAJOR]

  --pg MAJOR   benchmark that PostgreSQL major (default: the host's); a major
               the host does not package runs in the same Debian root as
               scripts/test.sh (scripts/roots.sh): the cluster runs inside the
               root, the report lands in BENCH_OUT on the host
  --publish    measure nothing: copy the last run of that major in BENCH_OUT
               (report.md, raw.csv, chart.png) to bench/results/ (the host's
               major) or bench/results/pgMAJOR/, where the README links,
               keeping the hand-written "## About this run" section of the
               report it replaces.  A run writes only to BENCH_OUT (bench/out/
               by default, ignored by git); this is the one step that changes
               bench/results/.
EOF
	exit 2
}

major=
here=
publish=
while [ $# -gt 0 ]; do
	case $1 in
		--pg) [ $# -ge 2 ] || usage; major=$2; shift 2 ;;
		--publish) publish=1; shift ;;
		--here) here=1; shift ;;
		*) usage ;;
	esac
done
if [ -z "$here" ]; then
	host=$(host_major) || exit 1
	major=${major:-$host}
fi
[ -n "${PG_SUITE[$major]:-}" ] || die "PostgreSQL $major is not one of ${PG_MAJORS[*]}"

# publish: the last run of $major in BENCH_OUT becomes the published one.
publish() {
	local out=${BENCH_OUT:-$REPO/bench/out} dest=$REPO/bench/results f about
	[ "$major" = "$host" ] || dest=$REPO/bench/results/pg$major
	for f in report.md raw.csv chart.png; do
		[ -s "$out/$f" ] || die "no $out/$f: run bash bench/run.sh${major:+ --pg $major} first"
	done
	sed -n 3p "$out/report.md" | grep -q "PostgreSQL $major\." ||
		die "$out/report.md is not a run of PostgreSQL $major: $(sed -n 3p "$out/report.md")"
	mkdir -p "$dest"
	# The hand-written part of the report being replaced: update it by hand.
	about=
	[ ! -f "$dest/report.md" ] || about=$(sed -n '/^## About this run$/,$p' "$dest/report.md")
	{
		# the run's report without its trailing blank lines
		awk 'NF { while (blank-- > 0) print ""; blank = 0; print; next } { blank++ }' \
			"$out/report.md"
		[ -z "$about" ] || printf '\n%s\n' "$about"
	} >"$dest/report.md.new"
	mv "$dest/report.md.new" "$dest/report.md"
	cp "$out/raw.csv" "$out/chart.png" "$dest/"
	say "Published the run of $out in ${dest#"$REPO"/}${about:+ (its \"About this run\" kept: check it still fits the numbers)}; review with git diff"
}
if [ -n "$publish" ]; then
	publish
	exit 0
fi

# A major the host does not package: run this script in its root, with the
# same settings, and copy the report out.
if [ -z "$here" ] && [ "$major" != "$host" ]; then
	# shellcheck source=scripts/roots.sh
	. "$REPO/scripts/roots.sh"
	bench_in_root "$major" run.sh BENCH_N BENCH_REPS BENCH_SECONDS BENCH_CLIENTS \
		BENCH_INSERT_ROWS BENCH_BURST BENCH_CALLGRIND_N || exit 1
	exit 0
fi
use_major "$major"
load_at_start=$(cut -d' ' -f1-3 /proc/loadavg)	# the machine is shared: say how busy it was

N=${BENCH_N:-2000000}
REPS=${BENCH_REPS:-3}
SECS=${BENCH_SECONDS:-5}
CLIENTS=${BENCH_CLIENTS:-"1 2 4 8"}
INSERT_ROWS=${BENCH_INSERT_ROWS:-1000000}
BURST=${BENCH_BURST:-10000000}
CG_N=${BENCH_CALLGRIND_N:-100000}
OUT=${BENCH_OUT:-$REPO/bench/out}
PORT=5440
unset PGHOST PGPORT PGUSER PGDATABASE PGOPTIONS PGSERVICE

# shellcheck disable=SC2046 # one word per package
install_packages $(packages_for "$PG_MAJOR" "${BENCH_PACKAGES[@]}")
build_and_install

enter_workdir bench

# fsync stays on, so snowflake's mark writes (a WAL flush and an fsynced file
# per second of ID time) are paid in full.  Commits do not wait for their WAL
# flush: that flush costs the same for every key and would hide the
# differences between them.  No autovacuum or checkpoint starts in the middle
# of a measurement; a CHECKPOINT runs before each insert measurement.
say "Creating the benchmark cluster in $WORK (runs as $(pg_user))"
cluster_create "$WORK" "$PORT" <<EOF
shared_preload_libraries = 'snowflake'
snowflake.worker_id = 1
shared_buffers = 512MB
synchronous_commit = off
autovacuum = off
max_wal_size = 16GB
checkpoint_timeout = 1h
max_connections = 40
EOF
cluster_start "$WORK"

as_pg "$PG_BINDIR/createdb" -h "$WORK" -p "$PORT" bench
# (through stdin: as root, the postgres user may not be able to read $REPO)
psql_bench -f - <"$REPO/bench/setup.sql"
# PostgreSQL 18's own uuidv7() joins the competitors where the server has it.
has_uuidv7() { [ "$(psql_bench -c "SELECT to_regprocedure('uuidv7()') IS NOT NULL")" = t ]; }

# record SECTION ORD NAME CLIENTS REP METRIC VALUE
record() {
	psql_bench -c "INSERT INTO results VALUES ('$1', $2, '$3', $4, $5, '$6', $7)"
}

# pgbench_tps CLIENTS SQL: run SQL as a pgbench script, print transactions/s.
pgbench_tps() {
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

# turns K REP: the indices 0..K-1, starting at a different one in each
# repetition, so that no competitor always runs first (after a checkpoint)
# or last
turns() { local i; for i in $(seq 0 $(($1 - 1))); do echo $(((i + $2) % $1)); done; }

# pgbench_section SECTION NAMES SCRIPTS [SETUP]: for each repetition and
# client count, run every script of the array SCRIPTS (named by the array
# NAMES) with pgbench, taking turns, and record its tps under SECTION; SETUP
# is SQL to run before each run
pgbench_section() {
	local -n names=$2 scripts=$3
	local rep c i tps
	for rep in $(seq "$REPS"); do
		for c in $CLIENTS; do
			for i in $(turns ${#names[@]} "$rep"); do
				[ -z "${4:-}" ] || psql_bench -c "$4"
				tps=$(pgbench_tps "$c" "${scripts[$i]}")
				record "$1" "$i" "${names[$i]}" "$c" "$rep" tps "$tps"
				printf '    rep %s  c=%-2d  %-28s %10.0f tps\n' "$rep" "$c" "${names[$i]}" "$tps"
			done
		done
	done
}

say "1. Bulk generation: $N IDs in one statement, $REPS times"
bulk_names=(
	"snowflake_nextval()"
	"snowflake_nextval(n), in the select list"
	"snowflake_nextval(n), in FROM"
	"nextval(), no cache"
	"nextval(), CACHE 100"
	"gen_random_uuid()"
)
bulk_sql=(
	"SELECT count(snowflake_nextval()) FROM generate_series(1, $N)"
	"SELECT count(id) FROM (SELECT snowflake_nextval($N) AS id) AS s"
	"SELECT count(*) FROM snowflake_nextval($N)"
	"SELECT count(nextval('seq_nocache')) FROM generate_series(1, $N)"
	"SELECT count(nextval('seq_cache100')) FROM generate_series(1, $N)"
	"SELECT count(gen_random_uuid()) FROM generate_series(1, $N)"
)
if has_uuidv7; then
	bulk_names+=("uuidv7()")
	bulk_sql+=("SELECT count(uuidv7()) FROM generate_series(1, $N)")
fi
bulk_names+=("clock_timestamp() (floor)")
bulk_sql+=("SELECT count(clock_timestamp()) FROM generate_series(1, $N)")
for rep in $(seq "$REPS"); do
	for i in $(turns ${#bulk_names[@]} "$rep"); do
		psql_bench -c "SELECT settle()" >/dev/null
		ms=$(psql_bench -c "SELECT time_ms(\$q\$${bulk_sql[$i]}\$q\$)")
		record bulk "$i" "${bulk_names[$i]}" 1 "$rep" ms "$ms"
		printf '    rep %s  %-42s %8.1f ms\n' "$rep" "${bulk_names[$i]}" "$ms"
	done
done

say "2. pgbench -M prepared, SELECT f(), $SECS s per run, $REPS times"
select_names=("snowflake_nextval()" "nextval(), no cache" "nextval(), CACHE 100"
	"gen_random_uuid()")
select_sql=("SELECT snowflake_nextval();" "SELECT nextval('seq_nocache');"
	"SELECT nextval('seq_cache100');" "SELECT gen_random_uuid();")
if has_uuidv7; then
	select_names+=("uuidv7()")
	select_sql+=("SELECT uuidv7();")
fi
select_names+=("clock_timestamp() (floor)")
select_sql+=("SELECT clock_timestamp();")
pgbench_section select select_names select_sql

# Bulk loads first, each into an empty table; the last one stays, so the
# single-row inserts go into tables of realistic size, where a random key
# touches pages all over its index (and, after each checkpoint, writes a
# full-page image of each) while an increasing key keeps to the right edge.
say "3. Inserts: INSERT ... SELECT of $INSERT_ROWS rows, then pgbench single-row INSERTs on top, $SECS s per run, $REPS times"
tables=(ins_snowflake ins_bigserial ins_uuid)
table_names=("DEFAULT snowflake_nextval()" "bigserial" "DEFAULT gen_random_uuid()")
if has_uuidv7; then
	tables+=(ins_uuidv7)
	table_names+=("DEFAULT uuidv7()")
fi
for rep in $(seq "$REPS"); do
	for i in $(turns ${#tables[@]} "$rep"); do
		psql_bench -c "TRUNCATE ${tables[$i]}" -c "CHECKPOINT" -c "SELECT settle()" >/dev/null
		ms=$(psql_bench -c "SELECT time_ms(\$q\$INSERT INTO ${tables[$i]} (v) SELECT i FROM generate_series(1, $INSERT_ROWS) AS i\$q\$)")
		record insert_select "$i" "${table_names[$i]}" 1 "$rep" ms "$ms"
		printf '    rep %s  INSERT ... SELECT  %-28s %8.0f ms\n' "$rep" "${table_names[$i]}" "$ms"
	done
done
# sizes SECTION: record each table's rows, table and index bytes
sizes() {
	local i
	for i in "${!tables[@]}"; do
		psql_bench -c "INSERT INTO results
			SELECT '$1', $i, '${table_names[$i]}', 0, 1, m, v
			  FROM (SELECT count(*) AS n_rows, pg_table_size('${tables[$i]}') AS tbl,
			               pg_indexes_size('${tables[$i]}') AS idx FROM ${tables[$i]}) AS s,
			       LATERAL (VALUES ('rows', n_rows), ('table_bytes', tbl), ('index_bytes', idx)) AS x(m, v)"
	done
}
sizes insert_select_size
insert_sql=()
for t in "${tables[@]}"; do insert_sql+=("INSERT INTO $t (v) VALUES (1);"); done
pgbench_section insert table_names insert_sql CHECKPOINT
sizes insert_size

# Beyond snowflake.max_borrow a burst waits for the clock: max_wait = 10 s
# lets the batch form wait too (by default it takes at most max_borrow +
# max_wait of ID time, less than a burst of 10M IDs needs).
say "4. Bursts of $BURST IDs above the ceiling, snowflake.max_wait = 10 s, $REPS times"
burst_names=("snowflake_nextval()" "snowflake_nextval(n)"
	"snowflake_nextval(), max_drift = 100 ms" "snowflake_nextval(n), max_drift = 100 ms")
burst_sql=("SELECT snowflake_nextval() FROM generate_series(1, $BURST)"
	"SELECT snowflake_nextval($BURST)")
# set_setting NAME VALUE|DEFAULT [SHOWN]: reload it and wait until SHOW
# prints SHOWN (by default VALUE)
set_setting() {
	if [ "$2" = DEFAULT ]; then
		psql_bench -c "ALTER SYSTEM RESET $1" >/dev/null
	else
		psql_bench -c "ALTER SYSTEM SET $1 = '$2'" >/dev/null
	fi
	psql_bench -c "SELECT pg_reload_conf()" >/dev/null
	for _ in $(seq 50); do
		[ "$(psql_bench -c "SHOW $1")" = "${3:-$2}" ] && return 0
		sleep 0.1
	done
	die "$1 did not become $2"
}
set_setting snowflake.max_wait 10s
for rep in $(seq "$REPS"); do
	for i in "${!burst_names[@]}"; do
		if [ "$i" -eq 2 ]; then set_setting snowflake.max_drift 100ms; fi
		psql_bench -c "SELECT settle()" -c "SELECT snowflake_stats_reset()" >/dev/null
		IFS='|' read -r ms ids drift < <(psql_bench -c "SELECT * FROM burst(\$q\$${burst_sql[$((i % 2))]}\$q\$)")
		[ "$ids" -eq "$BURST" ] || die "a burst returned $ids IDs, not $BURST"
		psql_bench -c "INSERT INTO results
			SELECT 'burst', $i, '${burst_names[$i]}', 1, $rep, m, v
			  FROM snowflake_stats,
			       LATERAL (VALUES ('ms', $ms), ('end_drift_ms', $drift),
			                       ('largest_drift_ms', largest_drift_ms), ('borrows', borrows),
			                       ('waits', waits), ('wait_time_ms', wait_time_ms),
			                       ('marks_written', marks_written), ('refusals', refusals)) AS x(m, v)"
		printf '    rep %s  %-42s %8.0f ms, drift at the end %5.0f ms\n' "$rep" "${burst_names[$i]}" "$ms" "$drift"
		if [ "$i" -eq 3 ]; then set_setting snowflake.max_drift DEFAULT 1min; fi
	done
done
set_setting snowflake.max_wait DEFAULT 1s

say "5. Instructions per call (callgrind, $CG_N calls, single-user backend)"
CG=$WORK/cg
as_pg mkdir "$CG"
cluster_create "$CG" "$PORT" <<EOF
shared_preload_libraries = 'snowflake'
snowflake.worker_id = 1
EOF
single() {	# single SQL: run SQL in a single-user backend of the callgrind cluster
	echo "$1" | as_pg "$PG_BINDIR/postgres" --single -D "$CG/data" postgres \
		>"$WORK/single.log" 2>&1 || { cat "$WORK/single.log"; die "single-user backend failed: $1"; }
}
single "CREATE EXTENSION snowflake"
single "CREATE SEQUENCE seq_nocache"
single "CREATE SEQUENCE seq_cache100 CACHE 100"
# name | statement | the function whose inclusive count is charged to it
cg_runs=(
	"snowflake_nextval()|SELECT count(snowflake_nextval()) FROM generate_series(1, $CG_N)|snowflake_nextval"
	"snowflake_nextval(n), per ID|SELECT count(id) FROM (SELECT snowflake_nextval($CG_N) AS id) AS s|snowflake_nextval_batch"
	"nextval(), no cache|SELECT count(nextval('seq_nocache')) FROM generate_series(1, $CG_N)|nextval_oid"
	"nextval(), CACHE 100|SELECT count(nextval('seq_cache100')) FROM generate_series(1, $CG_N)|nextval_oid"
	"gen_random_uuid()|SELECT count(gen_random_uuid()) FROM generate_series(1, $CG_N)|gen_random_uuid"
)
if has_uuidv7; then
	cg_runs+=("uuidv7()|SELECT count(uuidv7()) FROM generate_series(1, $CG_N)|uuidv7")
fi
cg_runs+=("clock_timestamp() (floor)|SELECT count(clock_timestamp()) FROM generate_series(1, $CG_N)|clock_timestamp")
for i in "${!cg_runs[@]}"; do
	IFS='|' read -r name sql func <<<"${cg_runs[$i]}"
	out=$WORK/callgrind.$i.out
	echo "$sql" | as_pg valgrind --tool=callgrind --callgrind-out-file="$out" \
		"$PG_BINDIR/postgres" --single -D "$CG/data" postgres >"$WORK/callgrind.log" 2>&1 ||
		{ tail -n 20 "$WORK/callgrind.log"; die "callgrind failed on: $sql"; }
	total=$(inclusive "$func" "$out")
	[ -n "$total" ] || die "callgrind counted nothing for $func"
	per_id=$(awk -v t="$total" -v n="$CG_N" 'BEGIN { printf "%.1f", t / n }')
	record callgrind "$i" "$name" 1 1 instructions "$per_id"
	printf '    %-34s %8.0f instructions per ID\n' "$name" "$per_id"
	if [ "$func" = snowflake_nextval ]; then
		# of which the generator's lock: LWLockAcquire and LWLockRelease
		# as called from sf_reserve (src/generator.c); nothing printed when
		# the profile has no sf_reserve, so that a renamed function stops
		# the run instead of reporting a lock that costs nothing
		lock=$(callgrind_annotate --tree=calling --inclusive=yes "$out" 2>/dev/null | awk -v n="$CG_N" '
			/\* .*:sf_reserve / { inblock = 1; seen = 1; next }
			inblock && /^ *$/ { inblock = 0 }
			inblock && /:LWLock(Acquire|Release) / { gsub(",", "", $1); sum += $1 }
			END { if (seen) printf "%.1f", sum / n }')
		[ -n "$lock" ] || die "callgrind found no sf_reserve under snowflake_nextval: has src/generator.c renamed it?"
		record callgrind_lock "$i" "$name" 1 1 instructions "$lock"
		printf '    %-34s %8.0f of them in the LWLock\n' "" "$lock"
	fi
done

say "Report"
mkdir -p "$OUT"
{
	echo "# snowflake benchmark"
	echo
	echo "Run $(date -u '+%Y-%m-%d %H:%M UTC') by \`bash bench/run.sh --pg $PG_MAJOR\` on $(nproc) cores" \
		"($(lscpu | sed -n 's/^Model name: *//p' | head -n 1)), $(free -g | awk '/^Mem:/ {print $2}') GiB RAM," \
		"Linux $(uname -r), $("$PG_BINDIR/postgres" --version | sed 's/^postgres (PostgreSQL) /PostgreSQL /')."
	echo "Load average (1, 5, 15 min) when the run started: $load_at_start."
	echo "Settings: N = $N, $REPS repetitions (median shown), pgbench runs of $SECS s, clients $CLIENTS;" \
		"shared_buffers = 512MB, synchronous_commit = off, fsync on, autovacuum off."
	echo
	psql_bench -v n="$N" -v insert_rows="$INSERT_ROWS" -v burst="$BURST" \
		-f - <"$REPO/bench/report.sql"
} | tee "$OUT/report.md"
psql_bench -c "\copy (SELECT * FROM results ORDER BY section, ord, clients, rep, metric) TO STDOUT WITH (FORMAT csv, HEADER)" >"$OUT/raw.csv"

# the chart's data, one file per panel, each with a header line of titles
tsv() { local IFS=$'\t'; echo "$*"; }
{
	tsv call "ns per ID"
	psql_bench -F $'\t' -c "SELECT name, value * 1e6 / $N FROM med WHERE section = 'bulk' ORDER BY ord"
} >"$OUT/bulk.dat"
{
	tsv call instructions
	psql_bench -F $'\t' -c "SELECT name, value FROM med WHERE section = 'callgrind' ORDER BY ord"
} >"$OUT/instructions.dat"
{
	tsv clients "${select_names[@]}"
	psql_bench -F $'\t' -c "SELECT clients, string_agg(value::text, E'\t' ORDER BY ord) FROM med
		WHERE section = 'select' GROUP BY clients ORDER BY clients"
} >"$OUT/select.dat"
{
	tsv clients "${table_names[@]}"
	psql_bench -F $'\t' -c "SELECT clients, string_agg(value::text, E'\t' ORDER BY ord) FROM med
		WHERE section = 'insert' GROUP BY clients ORDER BY clients"
} >"$OUT/insert.dat"
gnuplot -e "dir='$OUT'; version='$("$PG_CONFIG" --version | sed 's/ (.*//')'; nselect=${#select_names[@]}; ninsert=${#table_names[@]}" \
	"$REPO/bench/chart.gp"
rm -f "$OUT"/*.dat
say "Wrote $OUT/report.md, $OUT/raw.csv and $OUT/chart.png"
