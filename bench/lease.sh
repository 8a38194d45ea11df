#!/usr/bin/env bash
# bench/lease.sh - what a worker-id lease costs a server that generates IDs:
# the same measurements on a server with a configured worker id and on a
# server that leases its worker id from a registry, side by side in one run.
#
# usage: bash bench/lease.sh
#
# Three throwaway clusters of the host's PostgreSQL (15 on Debian 12): a
# registry (the extension created, the library not loaded), a server with
# snowflake.worker_id = 1, and a server with snowflake.registry pointing at
# the registry.  For BENCH_REPS repetitions, the two servers taking turns
# within each repetition (so that a slow patch of a shared machine hits
# both alike), it measures
#   1. SELECT count(snowflake_nextval()) FROM generate_series(1, BENCH_N);
#   2. SELECT count(*) FROM snowflake_nextval(BENCH_N);
#   3. pgbench -M prepared running SELECT snowflake_nextval(), BENCH_CLIENTS
#      clients for BENCH_SECONDS,
# and prints the medians, the ratio leased / configured, and the renewals
# the registry served per minute.  A run writes bench/out/lease.md; copy it
# into bench/results/ to publish it.
#
# Environment: PG_CONFIG (another installation of the host's major),
# BENCH_N (2000000), BENCH_REPS (5), BENCH_CLIENTS (8),
# BENCH_SECONDS (5), BENCH_LEASE_TIME (60s), BENCH_OUT (bench/out).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"

[ $# -eq 0 ] || { echo "usage: bash bench/lease.sh" >&2; exit 2; }

N=${BENCH_N:-2000000}
REPS=${BENCH_REPS:-5}
CLIENTS=${BENCH_CLIENTS:-8}
SECONDS_EACH=${BENCH_SECONDS:-5}
LEASE_TIME=${BENCH_LEASE_TIME:-60s}
OUT=${BENCH_OUT:-$REPO/bench/out}

# PG_CONFIG in the environment picks another installation of that major
given_pg_config=${PG_CONFIG:-}
use_major "$(host_major)"
PG_CONFIG=${given_pg_config:-$PG_CONFIG}
PG_BINDIR=$("$PG_CONFIG" --bindir)
# shellcheck disable=SC2046 # one word per package
install_packages $(packages_for "$PG_MAJOR" "${BENCH_PACKAGES[@]}")
build_and_install

enter_workdir lease-bench
mkdir -p "$OUT"
for node in registry configured leased; do
	mkdir "$WORK/$node"
	chown "$(pg_user)" "$WORK/$node" 2>/dev/null || true
done
cluster_create "$WORK/registry" 5501 </dev/null
cluster_create "$WORK/configured" 5502 <<EOF
shared_preload_libraries = 'snowflake'
snowflake.worker_id = 1
synchronous_commit = off
EOF
cluster_create "$WORK/leased" 5503 <<EOF
shared_preload_libraries = 'snowflake'
snowflake.registry = 'host=$WORK/registry port=5501 dbname=postgres user=fleet'
snowflake.lease_time = '$LEASE_TIME'
synchronous_commit = off
EOF

psql_on() {	# psql_on NODE PORT ARGS...: psql -XAtq on that node
	local node=$1 port=$2
	shift 2
	as_pg "$PG_BINDIR/psql" -XAtq -h "$WORK/$node" -p "$port" -d postgres "$@"
}

cluster_start "$WORK/registry"
psql_on registry 5501 -c "CREATE EXTENSION snowflake" \
	-c "CREATE ROLE fleet LOGIN" \
	-c "GRANT EXECUTE ON FUNCTION snowflake.lease_claim, snowflake.lease_renew, snowflake.lease_release TO fleet"
cluster_start "$WORK/configured"
cluster_start "$WORK/leased"
for pair in configured:5502 leased:5503; do
	psql_on "${pair%:*}" "${pair#*:}" -c "CREATE EXTENSION snowflake"
done
for _ in $(seq 1 100); do
	[ "$(psql_on leased 5503 -c "SELECT lease_state FROM snowflake_stats")" = held ] && break
	sleep 0.1
done
[ "$(psql_on leased 5503 -c "SELECT lease_state FROM snowflake_stats")" = held ] ||
	die "the leased server holds no lease after 10 s: $(psql_on leased 5503 -c "SELECT lease_error FROM snowflake_stats")"

# ms NODE PORT SQL: how long SQL takes on that node, in ms
ms() {
	psql_on "$1" "$2" -c '\timing on' -c "$3" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -n 1
}
echo 'SELECT snowflake_nextval();' >"$WORK/nextval.sql"
chmod a+r "$WORK/nextval.sql"
tps() {
	as_pg "$PG_BINDIR/pgbench" -h "$WORK/$1" -p "$2" -n -M prepared -c "$CLIENTS" -j "$CLIENTS" \
		-T "$SECONDS_EACH" -f "$WORK/nextval.sql" postgres 2>/dev/null |
		sed -n 's/^tps = \([0-9.]*\).*/\1/p'
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

declare -A samples
renewals_before=$(psql_on leased 5503 -c "SELECT lease_renewals FROM snowflake_stats")
t0=$(date +%s)
for rep in $(seq 1 "$REPS"); do
	say "Repetition $rep of $REPS"
	order="configured:5502 leased:5503"
	[ $((rep % 2)) -eq 0 ] && order="leased:5503 configured:5502"
	for pair in $order; do
		node=${pair%:*}
		port=${pair#*:}
		samples[$node,single]+="$(ms "$node" "$port" "SELECT count(snowflake_nextval()) FROM generate_series(1, $N)") "
		samples[$node,batch]+="$(ms "$node" "$port" "SELECT count(*) FROM snowflake_nextval($N)") "
		samples[$node,pgbench]+="$(tps "$node" "$port") "
	done
done
minutes=$(awk -v s=$(($(date +%s) - t0)) 'BEGIN { printf "%.2f", s / 60 }')
renewals=$(($(psql_on leased 5503 -c "SELECT lease_renewals FROM snowflake_stats") - renewals_before))

{
	echo "# Worker-id leases: what they cost a generating server"
	echo
	echo "$(date -u +%Y-%m-%d), PostgreSQL $PG_MAJOR, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) at the end;"
	echo "\`bash bench/lease.sh\` with BENCH_N=$N, BENCH_REPS=$REPS, BENCH_CLIENTS=$CLIENTS, BENCH_SECONDS=$SECONDS_EACH, lease_time $LEASE_TIME."
	echo "Medians of $REPS repetitions; the two servers took turns within each."
	echo
	echo "| measured | configured worker id | leased worker id | leased / configured |"
	echo "|---|---:|---:|---:|"
	for what in single:"$N single calls in one statement, ms" batch:"snowflake_nextval($N), ms" pgbench:"pgbench SELECT snowflake_nextval(), $CLIENTS clients, tps"; do
		key=${what%%:*}
		c=$(echo "${samples[configured,$key]}" | tr ' ' '\n' | grep . | median)
		l=$(echo "${samples[leased,$key]}" | tr ' ' '\n' | grep . | median)
		awk -v w="${what#*:}" -v c="$c" -v l="$l" -v k="$key" 'BEGIN {
			f = (k == "pgbench") ? "%.0f" : "%.1f"
			printf "| %s | " f " | " f " | %.2fx |\n", w, c, l, l / c }'
	done
	echo
	echo "The registry served $renewals renewals in $minutes minutes of the run"
	echo "($(awk -v r="$renewals" -v m="$minutes" 'BEGIN { printf "%.1f", r / m }') a minute for this one server)."
	echo
	echo "Every sample (ms or tps), in the order taken:"
	echo
	for key in single batch pgbench; do
		echo "- $key: configured ${samples[configured,$key]}; leased ${samples[leased,$key]}"
	done
} | tee "$OUT/lease.md"
