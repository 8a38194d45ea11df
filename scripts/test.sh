#!/usr/bin/env bash
# scripts/test.sh - run the whole test suite on every supported PostgreSQL
# major: 15 on the host (Debian 12), 17, 18 and 19 each in a Debian root of
# the suite that packages it (scripts/roots.sh builds and caches them).
#
# usage: scripts/test.sh [--pg MAJOR]... [--citus-tarball FILE]
#
#   --pg MAJOR             test only this major (repeatable); default: all
#                          of PG_MAJORS in scripts/lib.sh
#   --citus-tarball FILE   build Citus from this release source for the
#                          majors it supports and run t/304_citus.pl there
#                          (default: $SNOWFLAKE_CITUS_TARBALL; without one,
#                          that test skips, saying where to put it)
#
# For each major, on the host or in its root, the same procedure (run_major
# below): install the Debian packages it needs; build with that suite's
# compiler, warnings as errors and assertions enabled; install; run `make
# installcheck` (pg_regress, isolation, TAP) as a non-root user in a
# temporary copy of the tree, where a test whose dependency is missing fails
# rather than skips (except where lib.sh says Debian does not package it for
# that major); then the version check, and the Debian package built for that
# major and its autopkgtest (scripts/test-deb.sh).  On failure, prints the
# diffs and logs needed to diagnose it.  At the end, a summary per major.
# Exits non-zero if anything failed, including a root that could not be
# built.  Safe for CI: no prompts, no stdin needed; as a normal user, uses
# sudo for what needs root.
#
# Internal: `--here --pg MAJOR --result FILE` runs the procedure for MAJOR
# on this system (the host, or inside a root) and writes its counts to FILE.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=scripts/roots.sh
. "$REPO/scripts/roots.sh"

# Build flags: warnings as errors; Assert() in our code runs.
# -Wno-unused-parameter: PostgreSQL's own headers trip it.
TEST_CFLAGS="-Wall -Wextra -Werror -Wno-unused-parameter -DUSE_ASSERT_CHECKING"

usage() { sed -n '6,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

majors=()
here=
result=
citus_tarball=${SNOWFLAKE_CITUS_TARBALL:-}
while [ $# -gt 0 ]; do
	case $1 in
		--pg) [ $# -ge 2 ] || usage; majors+=("$2"); shift 2 ;;
		--here) here=1; shift ;;
		--result) [ $# -ge 2 ] || usage; result=$2; shift 2 ;;
		--citus-tarball) [ $# -ge 2 ] || usage; citus_tarball=$2; shift 2 ;;
		*) usage ;;
	esac
done
[ ${#majors[@]} -gt 0 ] || majors=("${PG_MAJORS[@]}")
if [ -n "$citus_tarball" ]; then
	[ -f "$citus_tarball" ] || die "the Citus tarball $citus_tarball does not exist"
	citus_tarball=$(cd "$(dirname "$citus_tarball")" && pwd)/$(basename "$citus_tarball")
fi
for m in "${majors[@]}"; do
	[ -n "${PG_SUITE[$m]:-}" ] ||
		die "PostgreSQL $m is not in the matrix (${PG_MAJORS[*]}): 16 is packaged by no Debian suite we can reach, 13 and 14 are not supported"
done

# ---------------------------------------------------------------------------
# One major, on this system
# ---------------------------------------------------------------------------

# check_not_packaged: each package NOT_PACKAGED_<major> lists really has no
# installation candidate here, so that no test is skipped for a package
# that Debian has begun to ship.
check_not_packaged() {
	local pkg
	for pkg in $(not_packaged "$PG_MAJOR"); do
		if apt-cache policy "$pkg" 2>/dev/null | sed -n 's/^ *Candidate: //p' | grep -qv '(none)'; then
			die "$pkg is listed in NOT_PACKAGED_$PG_MAJOR (scripts/lib.sh) but Debian ${PG_SUITE[$PG_MAJOR]} packages it: take it off the list"
		fi
	done
}

# count_results LOG: set passed, failed, failed_tap and skipped from the
# output of make installcheck.  pg_regress and isolation tests print
# "test NAME ... ok" up to 15 and TAP-style "ok N - NAME" from 16 on; prove
# prints one line per TAP script that failed or was skipped, and "Files=N".
count_results() {
	local regress_ok regress_bad tap_files tap_bad
	regress_ok=$(grep -cE '^(test |     )[^ ]+ +\.\.\. ok|^ok [0-9]+ +[-+] ' "$1" || true)
	regress_bad=$(grep -cE '^(test |     )[^ ]+ +\.\.\. (FAILED|failed)|^not ok [0-9]+ +[-+] ' "$1" || true)
	tap_files=$(sed -n 's/^Files=\([0-9]*\),.*/\1/p' "$1" | tail -n 1)
	failed_tap=$(sed -n 's#^t/\([^ ]*\)\.pl  *(Wstat.*#\1#p' "$1")
	tap_bad=$(printf '%s' "$failed_tap" | grep -c . || true)
	skipped=$(sed -n 's#^\(t/[^ ]*\.pl\) \.*  *skipped: #\1: #p' "$1")
	passed=$((regress_ok + ${tap_files:-0} - tap_bad))
	failed=$((regress_bad + tap_bad))
}

# show_failures DIR: each pg_regress run's diffs with the end of its server
# log, then the logs of the TAP scripts that failed; every log if none of
# those exist.
show_failures() {
	local shown='' diffs t f
	show() {	# show FILE [LINES]: print FILE, or its last LINES lines
		[ -f "$1" ] || return 0
		say "${2:+last $2 lines of }$(pwd)/$1"
		if [ -n "${2:-}" ]; then tail -n "$2" "$1"; else cat "$1"; fi
		shown=1
	}
	cd "$1"
	while IFS= read -r diffs; do
		show "$diffs"
		show "${diffs%regression.diffs}log/postmaster.log" 100
	done < <(find . -name regression.diffs -printf '%P\n' | sort)
	for t in $failed_tap; do
		show "tmp_check/log/regress_log_$t" 100
		for f in "tmp_check/log/${t}"_*.log; do show "$f" 100; done
	done
	if [ -z "$shown" ]; then
		for f in log/* output_*/log/* tmp_check/log/*; do show "$f" 100; done
	fi
	cd - >/dev/null
}

# run_major RESULT: the whole procedure for PG_MAJOR on this system; writes
# its counts to RESULT and returns non-zero if anything failed.
run_major() {
	local out=$1 copy log status=0 check compiler suite
	# shellcheck disable=SC2046 # one word per package
	install_packages $(packages_for "$PG_MAJOR" "${TEST_PACKAGES[@]}" "${DEB_PACKAGES[@]}")
	check_not_packaged
	# Every dependency is installed now, so a TAP test that would skip for a
	# missing one fails instead (t/SnowflakeTest.pm): a skip here is a broken
	# setup, except for what Debian does not package for this major.
	export SNOWFLAKE_REQUIRE_ALL=1
	SNOWFLAKE_NOT_PACKAGED=$(not_packaged "$PG_MAJOR" | paste -sd' ' -)
	export SNOWFLAKE_NOT_PACKAGED

	compiler=$(cc --version | head -n 1)
	make -C "$REPO" -s PG_CONFIG="$PG_CONFIG" clean	# so every file gets the flags below
	PG_CFLAGS=$TEST_CFLAGS build_and_install

	# Citus, for t/304_citus.pl, where it supports this major: built (or
	# taken from its cache) now.  SNOWFLAKE_CITUS=1 makes that test fail,
	# rather than skip, if Citus is not installed after all.
	unset SNOWFLAKE_CITUS
	if [ -n "$citus_tarball" ] && citus_supports "$PG_MAJOR"; then
		say "Building Citus for PostgreSQL $PG_MAJOR (scripts/build-citus.sh)"
		bash "$REPO/scripts/build-citus.sh" "$citus_tarball" "$PG_CONFIG" ||
			say "Citus did not build for PostgreSQL $PG_MAJOR: t/304_citus.pl will fail"
		export SNOWFLAKE_CITUS=1
	fi

	copy=$(owned_tmpdir test)
	copy_tree "$REPO" "$copy"
	if is_root; then
		chown -R postgres:postgres "$copy"
	fi

	say "Running make installcheck for PostgreSQL $PG_MAJOR as $(pg_user) in $copy"
	log=$copy/installcheck.log
	# pg_regress, isolation and TAP tests one after the other, so that a
	# failure in one does not keep the others from running
	for suite in "ISOLATION= TAP_TESTS=" "REGRESS= TAP_TESTS=" "REGRESS= ISOLATION="; do
		# shellcheck disable=SC2086 # two make variables
		(cd "$copy" && as_pg make PG_CONFIG="$PG_CONFIG" installcheck $suite) 2>&1 |
			tee -a "$log" || status=1
	done
	count_results "$log"

	# Beyond installcheck: one version everywhere, and the Debian package
	# builds for this major, installs and passes its autopkgtest.
	# On the host's major, also that the C code is as PostgreSQL 15's
	# pgindent formats it (the later suites carry neither its source nor the
	# pg_bsd_indent 2.1.1 it wants).
	local checks=(check-version.sh test-deb.sh)
	[ "$PG_MAJOR" != 15 ] || checks+=("pgindent.sh --check" check-links.sh)
	for check in "${checks[@]}"; do
		say "Running scripts/$check"
		# shellcheck disable=SC2086 # the script's name and its option
		if PG_MAJOR=$PG_MAJOR PG_CONFIG=$PG_CONFIG bash "$REPO"/scripts/$check; then
			passed=$((passed + 1))
		else
			failed=$((failed + 1))
			status=1
		fi
	done
	[ "$failed" -eq 0 ] || status=1

	{
		printf 'passed\t%s\nfailed\t%s\n' "$passed" "$failed"
		printf 'compiler\t%s\n' "$compiler"
		printf 'postgres\t%s\n' "$("$PG_CONFIG" --version)"
		printf 'skipped\t%s\n' "$(printf '%s' "$skipped" | paste -sd';' -)"
	} >"$out"

	if [ "$status" -eq 0 ]; then
		rm -rf "$copy"
		say "PostgreSQL $PG_MAJOR: all passed ($passed): pg_regress and isolation tests, TAP scripts, the version check and the package test"
		return 0
	fi
	show_failures "$copy"
	say "PostgreSQL $PG_MAJOR: $failed failed; the test tree is kept in $copy"
	return 1
}

if [ -n "$here" ]; then
	if [ ${#majors[@]} -ne 1 ] || [ -z "$result" ]; then usage; fi
	use_major "${majors[0]}"
	run_major "$result"
	exit
fi

# ---------------------------------------------------------------------------
# The matrix: each major on the host or in its root, then the summary
# ---------------------------------------------------------------------------

host=$(host_major) || exit 1
RESULTS=$(mktemp -d /tmp/snowflake-matrix.XXXXXX)
trap 'jobs -p | xargs -r kill 2>/dev/null; rm -rf "$RESULTS"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# test_major MAJOR: run the procedure for MAJOR where it belongs; record in
# RESULTS/MAJOR.* where it ran, how long it took and how it ended.
test_major() {
	local major=$1 t0 status=0 dir citus_option
	t0=$(date +%s)
	if [ "$major" = "$host" ]; then
		echo "host (Debian ${PG_SUITE[$major]})" >"$RESULTS/$major.where"
		bash "$REPO/scripts/test.sh" --here --pg "$major" --result "$RESULTS/$major.result" \
			${citus_tarball:+--citus-tarball "$citus_tarball"} || status=$?
	else
		echo "root (Debian $(root_suites "$major" | sed 's/ / + /'))" >"$RESULTS/$major.where"
		dir=$(root_dir "$major")
		# (whether Citus supports the major is decided in there, by run_major)
		citus_option=()
		if [ -n "$citus_tarball" ]; then
			citus_option=(--citus-tarball "$ROOT_CITUS_DIR/$(basename "$citus_tarball")")
		fi
		if wait_root "$major" && ensure_root "$major"; then
			t0=$(date +%s)	# the tests' time, without the root's
			# (a failed run leaves its test tree in the root's /tmp)
			{ as_root find "$dir/tmp" -mindepth 1 -maxdepth 1 -name 'snowflake-*' -exec rm -rf {} + &&
				as_root rm -f "$dir/build/result" &&
				root_sync_tree "$major" &&
				root_copy_citus "$major" &&
				root_run "$major" bash /build/snowflake/scripts/test.sh --here --pg "$major" \
					--result /build/result "${citus_option[@]}"; } ||
				status=$?
			if [ -f "$dir/build/result" ]; then cp "$dir/build/result" "$RESULTS/$major.result"; fi
			[ "$status" -eq 0 ] || echo "(paths inside the root are under $dir)"
		else
			status=1
			echo "the root could not be built" >"$RESULTS/$major.error"
		fi
	fi
	echo $(($(date +%s) - t0)) >"$RESULTS/$major.seconds"
	echo "$status" >"$RESULTS/$major.status"
}

# root_copy_citus MAJOR: the Citus tarball, if any, into the root (at
# ROOT_CITUS_DIR).
ROOT_CITUS_DIR=/build/citus
root_copy_citus() {
	[ -n "$citus_tarball" ] || return 0
	as_root mkdir -p "$(root_dir "$1")$ROOT_CITUS_DIR" &&
		as_root cp "$citus_tarball" "$(root_dir "$1")$ROOT_CITUS_DIR/"
}

# field MAJOR NAME: one value from MAJOR's result file
field() {
	[ -f "$RESULTS/$1.result" ] || return 0
	awk -F'\t' -v k="$2" '$1 == k { sub(/^[^\t]*\t/, ""); print; exit }' "$RESULTS/$1.result"
}
duration() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# prebuild_roots: build the missing roots in the background, all at once,
# while the host's major is tested: downloading and unpacking packages waits
# mostly on the network and the disk.  test_major waits for its root.
declare -A ROOT_BUILD=()
prebuild_roots() {
	local major
	for major in "${majors[@]}"; do
		if [ "$major" = "$host" ] || root_ok "$major"; then continue; fi
		if [ ${#ROOT_BUILD[@]} -eq 0 ]; then	# once, before the builds start
			install_packages mmdebstrap
			debian_mirror >/dev/null
		fi
		say "Building the root for PostgreSQL $major in the background ($RESULTS/$major.root.log)"
		(
			t0=$(date +%s)
			status=0
			ensure_root "$major" >"$RESULTS/$major.root.log" 2>&1 || status=$?
			echo $(($(date +%s) - t0)) >"$RESULTS/$major.root_build_seconds"
			exit "$status"
		) &
		ROOT_BUILD[$major]=$!
	done
}

# wait_root MAJOR: wait for MAJOR's root if it is being built, and print the
# build's output; returns 1 if the build failed.
wait_root() {
	local status=0
	[ -n "${ROOT_BUILD[$1]:-}" ] || return 0
	wait "${ROOT_BUILD[$1]}" || status=$?
	unset "ROOT_BUILD[$1]"
	cat "$RESULTS/$1.root.log"
	return "$status"
}

t_start=$(date +%s)
prebuild_roots
for major in "${majors[@]}"; do
	test_major "$major"
done

say "Summary"
total_passed=0
total_failed=0
skips=
printf '%-5s  %-30s  %-6s  %6s  %6s  %7s  %-13s  %-36s  %s\n' \
	major "where" result passed failed tests root compiler PostgreSQL
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
	if [ "$major" = "$host" ]; then
		root=-
	elif [ -f "$RESULTS/$major.root_build_seconds" ]; then
		root="built $(duration "$(cat "$RESULTS/$major.root_build_seconds")")"
	else
		root=cached
	fi
	printf '%-5s  %-30s  %-6s  %6s  %6s  %7s  %-13s  %-36s  %s\n' "$major" "$(cat "$RESULTS/$major.where")" \
		"$([ "$status" -eq 0 ] && echo ok || echo FAILED)" "$p" "$f" \
		"$(duration "$(cat "$RESULTS/$major.seconds")")" "$root" \
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
echo
echo "The matrix took $(duration $(($(date +%s) - t_start))) (${majors[*]})."
echo "matrix: $total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ]
