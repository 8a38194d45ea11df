#!/usr/bin/env bash
# scripts/test.sh - the whole test suite on every supported PostgreSQL major
# (PG_MAJORS in scripts/lib.sh): the host's major on the host, each other one
# in a Debian root of the suite that packages it (scripts/roots.sh builds
# them and keeps them for later runs).  The options are in usage() below.
#
# For each major this runs the same procedure, scripts/test-major.sh: install
# what is missing, build with warnings as errors, every test suite, the
# version check, the Debian package and its autopkgtest.  Roots that are
# missing are built in the background from the start, and up to --jobs majors
# are tested at once (each root is a system of its own, and the test servers
# take free ports): while several run, their progress is printed step by step
# and each major's whole output once it ends.  At the end, a summary: per
# major, where it ran, the counts and its time, then each step's time.
# Exits non-zero if anything failed, including a root that could not be
# built.  Safe for CI: no prompts, no stdin needed; as a normal user, uses
# sudo for what needs root.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=scripts/roots.sh
. "$REPO/scripts/roots.sh"

usage() {
	cat >&2 <<'EOF'
usage: scripts/test.sh [--fast] [--pg MAJOR]... [--jobs N] [--citus-tarball FILE]

  --fast                 only the first test, `make installcheck` (pg_regress,
                         isolation and the core TAP scripts), by default on
                         the host's major alone: a few minutes
  --pg MAJOR             test only this major (repeatable); default: all of
                         PG_MAJORS in scripts/lib.sh
  --jobs N               test up to N majors at once (default 2; 1, or a
                         single major, prints its output as it comes)
  --citus-tarball FILE   build Citus from this release source for the majors
                         it supports and run t/304_citus.pl there (default:
                         $SNOWFLAKE_CITUS_TARBALL; without one, that test
                         skips, saying where to put it)

Environment: TAP_JOBS, how many TAP scripts each major runs at once (the
Makefile's default if unset); SNOWFLAKE_ROOTS_DIR, where the roots are kept.
EOF
	exit 2
}

majors=()
fast=
jobs=2
citus_tarball=${SNOWFLAKE_CITUS_TARBALL:-}
while [ $# -gt 0 ]; do
	case $1 in
		--fast) fast=1; shift ;;
		--pg) [ $# -ge 2 ] || usage; majors+=("$2"); shift 2 ;;
		--jobs) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage; jobs=$2; shift 2 ;;
		--citus-tarball) [ $# -ge 2 ] || usage; citus_tarball=$2; shift 2 ;;
		*) usage ;;
	esac
done
host=$(host_major) || exit 1
if [ ${#majors[@]} -eq 0 ]; then
	if [ -n "$fast" ]; then majors=("$host"); else majors=("${PG_MAJORS[@]}"); fi
fi
if [ -n "$citus_tarball" ]; then
	[ -f "$citus_tarball" ] || die "the Citus tarball $citus_tarball does not exist"
	citus_tarball=$(cd "$(dirname "$citus_tarball")" && pwd)/$(basename "$citus_tarball")
fi
# one major: its output as it comes
[ ${#majors[@]} -gt 1 ] || jobs=1
for m in "${majors[@]}"; do
	[ -n "${PG_SUITE[$m]:-}" ] ||
		die "PostgreSQL $m is not in the matrix (${PG_MAJORS[*]}): 16 is packaged by no Debian suite we can reach, 13 and 14 are not supported"
done

is_root || as_root true	# sudo asks for a password now, if it must, not in a background job
RESULTS=$(mktemp -d /tmp/snowflake-matrix.XXXXXX)
# Each background job (a root being built, a major being tested) gets a
# process group of its own, so that stopping the run stops everything it
# started.
set -m
declare -A ROOT_JOB=() TEST_JOB=()
stop_jobs() {
	local pid
	for pid in "${ROOT_JOB[@]}" "${TEST_JOB[@]}"; do
		kill -TERM -- "-$pid" 2>/dev/null || true
	done
	rm -rf "$RESULTS"
}
trap stop_jobs EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

now() { date +%s; }
duration() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
clock() { date -u +%H:%M:%S; }

# result_file MAJOR: where test-major.sh writes MAJOR's result (inside the
# root for a root's major; readable from here while it runs).
result_file() {
	if [ "$1" = "$host" ]; then
		echo "$RESULTS/$1.result"
	else
		echo "$(root_dir "$1")/build/result"
	fi
}

# field MAJOR NAME: one value from MAJOR's result
field() {
	[ -f "$RESULTS/$1.result" ] || return 0
	awk -F'\t' -v k="$2" '$1 == k { sub(/^[^\t]*\t/, ""); print; exit }' "$RESULTS/$1.result"
}

# ---------------------------------------------------------------------------
# Roots: the missing ones are built in the background, all at once, from the
# start (downloading and unpacking packages waits mostly on the network and
# the disk).  A major whose root is not ready yet waits for it.
# ---------------------------------------------------------------------------

# root_state MAJOR: "host", "ready", "building" or "failed".
root_state() {
	if [ "$1" = "$host" ]; then
		echo host
	elif [ -n "${ROOT_JOB[$1]:-}" ]; then
		echo building
	elif [ -f "$RESULTS/$1.root_failed" ]; then
		echo failed
	else
		echo ready
	fi
}

start_root_builds() {
	local major started=
	for major in "${majors[@]}"; do
		if [ "$major" = "$host" ] || root_ok "$major"; then continue; fi
		if [ -z "$started" ]; then	# once, before the builds start
			install_packages mmdebstrap
			debian_mirror >/dev/null
			started=1
		fi
		say "Building the root for PostgreSQL $major in the background ($RESULTS/$major.root.log)"
		(
			t0=$(now)
			status=0
			ensure_root "$major" >"$RESULTS/$major.root.log" 2>&1 </dev/null || status=$?
			echo $(($(now) - t0)) >"$RESULTS/$major.root_seconds"
			exit "$status"
		) &
		ROOT_JOB[$major]=$!
	done
}

# check_root_builds: for each root build that has ended, say how.
check_root_builds() {
	local major status
	for major in "${!ROOT_JOB[@]}"; do
		! kill -0 "${ROOT_JOB[$major]}" 2>/dev/null || continue
		status=0
		wait "${ROOT_JOB[$major]}" || status=$?
		unset "ROOT_JOB[$major]"
		if [ "$status" -eq 0 ]; then
			say "[$(clock)] The root for PostgreSQL $major is ready (built in $(duration "$(cat "$RESULTS/$major.root_seconds")"))"
		else
			touch "$RESULTS/$major.root_failed"
			echo "the root could not be built" >"$RESULTS/$major.error"
			cat "$RESULTS/$major.root.log"
			say "[$(clock)] The root for PostgreSQL $major could not be built: PostgreSQL $major is not tested"
		fi
	done
}

# ---------------------------------------------------------------------------
# One major, on the host or in its root
# ---------------------------------------------------------------------------

# test_major MAJOR: run scripts/test-major.sh for MAJOR where it belongs;
# record in RESULTS/MAJOR.* where it ran, how long it took and how it ended.
test_major() {
	local major=$1 t0 status=0 dir citus_option=()
	t0=$(now)
	if [ "$major" = "$host" ]; then
		echo "host (Debian ${PG_SUITE[$major]})" >"$RESULTS/$major.where"
		[ -z "$citus_tarball" ] || citus_option=(--citus-tarball "$citus_tarball")
		bash "$REPO/scripts/test-major.sh" --pg "$major" ${fast:+--fast} \
			--result "$(result_file "$major")" "${citus_option[@]}" || status=$?
	else
		echo "root (Debian $(root_suites "$major" | sed 's/ / + /'))" >"$RESULTS/$major.where"
		dir=$(root_dir "$major")
		# (whether Citus supports the major is decided in there)
		if [ -n "$citus_tarball" ]; then
			citus_option=(--citus-tarball "$ROOT_CITUS_DIR/$(basename "$citus_tarball")")
		fi
		# (a failed run leaves its test tree in the root's /tmp)
		{ ensure_root "$major" &&
			as_root find "$dir/tmp" -mindepth 1 -maxdepth 1 -name 'snowflake-*' -exec rm -rf {} + &&
			root_sync_tree "$major" &&
			root_copy_citus "$major" &&
			root_run "$major" ${TAP_JOBS:+TAP_JOBS="$TAP_JOBS"} \
				bash /build/snowflake/scripts/test-major.sh --pg "$major" ${fast:+--fast} \
				--result /build/result "${citus_option[@]}"; } ||
			status=$?
		[ "$status" -eq 0 ] || echo "(paths inside the root are under $dir)"
		if [ -f "$dir/build/result" ]; then cp "$dir/build/result" "$RESULTS/$major.result"; fi
	fi
	echo $(($(now) - t0)) >"$RESULTS/$major.seconds"
	echo "$status" >"$RESULTS/$major.status"
	return "$status"
}

# root_copy_citus MAJOR: the Citus tarball, if any, into the root (at
# ROOT_CITUS_DIR).
ROOT_CITUS_DIR=/build/citus
root_copy_citus() {
	[ -n "$citus_tarball" ] || return 0
	as_root mkdir -p "$(root_dir "$1")$ROOT_CITUS_DIR" &&
		as_root cp "$citus_tarball" "$(root_dir "$1")$ROOT_CITUS_DIR/"
}

# ---------------------------------------------------------------------------
# The schedule: start each major, in the order given, once its root is ready
# and fewer than --jobs are running; with more than one at a time, print
# each step as it ends and each major's output when it ends.
# ---------------------------------------------------------------------------

declare -A SHOWN=()	# per running major, how many of its steps were printed

start_test() {
	local major=$1
	# (not a result left by an earlier run: its steps would show as progress)
	as_root rm -f "$(result_file "$major")"
	if [ "$jobs" -eq 1 ]; then
		say "[$(clock)] PostgreSQL $major: testing"
		test_major "$major" </dev/null &
	else
		say "[$(clock)] PostgreSQL $major: testing, its output in $RESULTS/$major.log"
		test_major "$major" </dev/null >"$RESULTS/$major.log" 2>&1 &
	fi
	TEST_JOB[$major]=$!
	SHOWN[$major]=0
}

# show_steps MAJOR: print the steps MAJOR has ended since the last call.
show_steps() {
	local file n
	file=$(result_file "$1")
	[ -r "$file" ] || return 0
	n=$(grep -c '^step' "$file" || true)
	[ "$n" -gt "${SHOWN[$1]}" ] || return 0
	awk -F'\t' -v skip="${SHOWN[$1]}" -v major="$1" -v t="$(clock)" \
		'$1 == "step" && ++i > skip { printf "    [%s] PostgreSQL %s: %s %dm%02ds %s\n", t, major, $2, $3 / 60, $3 % 60, $4 }' "$file"
	SHOWN[$1]=$n
}

# check_tests: for each major that has ended, say how, with its output.
check_tests() {
	local major status
	for major in "${!TEST_JOB[@]}"; do
		[ "$jobs" -eq 1 ] || show_steps "$major"
		! kill -0 "${TEST_JOB[$major]}" 2>/dev/null || continue
		status=0
		wait "${TEST_JOB[$major]}" || status=$?
		unset "TEST_JOB[$major]"
		if [ "$jobs" -gt 1 ]; then
			say "[$(clock)] PostgreSQL $major: ended ($([ "$status" -eq 0 ] && echo ok || echo FAILED)); its output:"
			sed 's/^/  | /' "$RESULTS/$major.log"
		fi
		say "[$(clock)] PostgreSQL $major: $([ "$status" -eq 0 ] && echo ok || echo FAILED) in $(duration "$(cat "$RESULTS/$major.seconds")")"
	done
}

t_start=$(now)
say "Testing PostgreSQL ${majors[*]}$([ ${#majors[@]} -eq 1 ] || echo ", up to $jobs at once")"
start_root_builds
pending=("${majors[@]}")
while [ ${#pending[@]} -gt 0 ] || [ ${#TEST_JOB[@]} -gt 0 ]; do
	check_root_builds
	check_tests
	waiting=()
	for major in "${pending[@]}"; do
		case $(root_state "$major") in
			building) waiting+=("$major") ;;
			failed) echo 1 >"$RESULTS/$major.status" ;;
			*)
				if [ ${#TEST_JOB[@]} -lt "$jobs" ]; then
					start_test "$major"
				else
					waiting+=("$major")
				fi
				;;
		esac
	done
	pending=("${waiting[@]}")
	if [ ${#pending[@]} -gt 0 ] || [ ${#TEST_JOB[@]} -gt 0 ]; then sleep 5; fi
done

# ---------------------------------------------------------------------------
# The summary
# ---------------------------------------------------------------------------

say "Summary"
total_passed=0
total_failed=0
skips=
printf '%-5s  %-32s  %-6s  %6s  %6s  %7s  %-36s  %s\n' \
	major "where" result passed failed time compiler PostgreSQL
for major in "${majors[@]}"; do
	p=$(field "$major" passed)
	f=$(field "$major" failed)
	status=$(cat "$RESULTS/$major.status")
	if [ -z "$p" ]; then	# no counts: the root or the setup failed
		p=0
		f=1
	fi
	[ "$status" -eq 0 ] || [ "$f" -gt 0 ] || f=1
	total_passed=$((total_passed + p))
	total_failed=$((total_failed + f))
	printf '%-5s  %-32s  %-6s  %6s  %6s  %7s  %-36s  %s\n' "$major" \
		"$(cat "$RESULTS/$major.where" 2>/dev/null || echo "root (not built)")" \
		"$([ "$status" -eq 0 ] && echo ok || echo FAILED)" "$p" "$f" \
		"$(duration "$(cat "$RESULTS/$major.seconds" 2>/dev/null || echo 0)")" \
		"$(field "$major" compiler | sed 's/^cc //' | cut -c1-36)" \
		"$(field "$major" postgres | sed 's/^PostgreSQL //')$(cat "$RESULTS/$major.error" 2>/dev/null || true)"
	s=$(field "$major" skipped)
	[ -z "$s" ] || skips+="    PostgreSQL $major: ${s//;/; }"$'\n'
done
if [ -n "$skips" ]; then
	echo
	echo "Skipped because Debian does not package what they need for that major (NOT_PACKAGED_* in scripts/lib.sh):"
	printf '%s' "$skips"
fi

# Each step's time per major (minutes:seconds; "-" not run, "*" failed).  The
# root's is its build in this run, in the background ("cached": kept from an
# earlier run).
echo
steps=(packages build citus pg_regress isolation tap-core tap-clients tap-fleet version package pgindent links)
width() { local w=${#1}; echo $((w > 7 ? w : 7)); }	# a step's column: its name, or 10m00s*
printf '%-5s  %-7s' major root
for s in "${steps[@]}"; do printf "  %-$(width "$s")s" "$s"; done
echo
for major in "${majors[@]}"; do
	if [ "$major" = "$host" ]; then
		root=-
	elif [ -f "$RESULTS/$major.root_seconds" ]; then
		root=$(duration "$(cat "$RESULTS/$major.root_seconds")")
	else
		root=cached
	fi
	printf '%-5s  %-7s' "$major" "$root"
	for s in "${steps[@]}"; do
		printf "  %-$(width "$s")s" "$([ -f "$RESULTS/$major.result" ] && awk -F'\t' -v s="$s" '
			$1 == "step" && $2 == s { printf "%dm%02ds%s", $3 / 60, $3 % 60, $4 == "ok" ? "" : "*"; found = 1 }
			END { if (!found) printf "-" }' "$RESULTS/$major.result" || echo -)"
	done
	echo
done
echo
sum=0
for major in "${majors[@]}"; do sum=$((sum + $(cat "$RESULTS/$major.seconds" 2>/dev/null || echo 0))); done
if [ ${#majors[@]} -eq 1 ]; then
	echo "The run took $(duration $(($(now) - t_start))) (${majors[*]})."
else
	echo "The matrix took $(duration $(($(now) - t_start))) (${majors[*]}, up to $jobs at once; the majors' own times add up to $(duration "$sum"))."
fi
echo "matrix: $total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ]
