#!/usr/bin/env bash
# scripts/test-major.sh - the test procedure for one PostgreSQL major, run on
# this system: scripts/test.sh runs it on the host for the host's major, and
# inside the major's Debian root (scripts/roots.sh) for every other one.
# The options are in usage() below.
#
# The steps, one after the other, each timed:
#   packages     install the Debian packages the tests need (TEST_PACKAGES
#                and DEB_PACKAGES in scripts/lib.sh) where missing
#   build        build with this suite's compiler, warnings as errors and
#                assertions enabled, and install
#   citus        with --citus-tarball, where Citus supports the major: build
#                it (or take it from its cache) for t/304_citus.pl
#   pg_regress, isolation, tap-core, tap-clients, tap-fleet
#                the test suites, as the Makefile's targets run them (make
#                installcheck, installcheck-clients, installcheck-fleet), as a
#                non-root user in a temporary copy of the tree; here a TAP test
#                whose dependency is missing fails rather than skips (except
#                where lib.sh says Debian does not package it for the major)
#   version      scripts/check-version.sh
#   package      the Debian package built for this major, and its
#                autopkgtest (scripts/test-deb.sh)
#   pgindent     on 15 only: the C is as PostgreSQL 15's pgindent formats it
#   links        on 15 only: the links between the Markdown files lead
#                somewhere (scripts/check-links.sh)
# With --fast, only the first test: packages (FAST_TEST_PACKAGES), build,
# pg_regress, isolation and tap-core, which is `make installcheck`.
# A failed step does not stop the ones after it, except packages and build.
# On failure, prints the diffs and logs needed to diagnose it.  Exits non-zero
# if anything failed.
#
# The result file gets one line per step as it ends ("step", its name, its
# seconds, ok or FAILED), which scripts/test.sh shows as progress, the
# compiler and the PostgreSQL version once the packages are in, and at the
# end the counts and the tests skipped for packages Debian does not have;
# lines are NAME<TAB>VALUE...
# (the steps' functions are called through step:)
# shellcheck disable=SC2317
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	cat >&2 <<'EOF'
usage: scripts/test-major.sh --pg MAJOR [--fast] [--result FILE] [--citus-tarball FILE]

  --pg MAJOR             the PostgreSQL major to test; this system's Debian
                         suite must package it (PG_SUITE in scripts/lib.sh)
  --fast                 only the first test (make installcheck): pg_regress,
                         isolation and the core TAP scripts
  --result FILE          write the steps' times and the counts to FILE
  --citus-tarball FILE   build Citus from this release source, if it supports
                         MAJOR, for t/304_citus.pl

Environment: TAP_JOBS, how many TAP scripts run at once (the Makefile's
default if unset).
EOF
	exit 2
}

# Build flags: warnings as errors; Assert() in our code runs.
# -Wno-unused-parameter: PostgreSQL's own headers trip it.
TEST_CFLAGS="-Wall -Wextra -Werror -Wno-unused-parameter -DUSE_ASSERT_CHECKING"

major=
fast=
result=
citus_tarball=
while [ $# -gt 0 ]; do
	case $1 in
		--pg) [ $# -ge 2 ] || usage; major=$2; shift 2 ;;
		--fast) fast=1; shift ;;
		--result) [ $# -ge 2 ] || usage; result=$2; shift 2 ;;
		--citus-tarball) [ $# -ge 2 ] || usage; citus_tarball=$2; shift 2 ;;
		*) usage ;;
	esac
done
[ -n "$major" ] || usage
[ -n "${PG_SUITE[$major]:-}" ] || die "PostgreSQL $major is not in the matrix (PG_MAJORS in scripts/lib.sh)"
[ -z "$citus_tarball" ] || [ -f "$citus_tarball" ] || die "the Citus tarball $citus_tarball does not exist"
use_major "$major"
[ -n "$result" ] || result=$(mktemp /tmp/snowflake-result.XXXXXX)
: >"$result"

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

# step NAME COMMAND...: run COMMAND as step NAME, in a subshell that stops
# at the first command that fails (set -e), and append its time and how it
# ended to the result file.  Sets step_ok to 1 or 0.  Call it as a command of
# its own, not in a condition (`if step`, `step || ...`): bash ignores set -e
# in everything a condition runs.
failed_steps=
step() {
	local name=$1 t0 status
	shift
	t0=$(date +%s)
	set +e
	(
		set -e
		"$@"
	)
	status=$?
	set -e
	printf 'step\t%s\t%s\t%s\n' "$name" $(($(date +%s) - t0)) \
		"$([ "$status" -eq 0 ] && echo ok || echo FAILED)" >>"$result"
	step_ok=1
	[ "$status" -eq 0 ] || { step_ok=0; failed_steps+=" $name"; }
}

# count_results LOG: set passed, failed, failed_tap and skipped from the
# output of make installcheck.  pg_regress and isolation tests print
# "test NAME ... ok" up to 15 and TAP-style "ok N - NAME" from 16 on; prove
# prints a line per TAP script that failed ("Wstat") or was skipped, and
# "Files=N" once per run.
count_results() {
	local regress_ok regress_bad tap_files tap_bad
	regress_ok=$(grep -cE '^(test |     )[^ ]+ +\.\.\. ok|^ok [0-9]+ +[-+] ' "$1" || true)
	regress_bad=$(grep -cE '^(test |     )[^ ]+ +\.\.\. (FAILED|failed)|^not ok [0-9]+ +[-+] ' "$1" || true)
	tap_files=$(awk -F'[=,]' '/^Files=[0-9]+,/ { n += $2 } END { print n + 0 }' "$1")
	failed_tap=$(sed -n 's#^t/\([^ ]*\)\.pl  *(Wstat.*#\1#p' "$1")
	tap_bad=$(printf '%s' "$failed_tap" | grep -c . || true)
	skipped=$(sed -n 's#^\(\[[0-9:]*\] \)\{0,1\}\(t/[^ ]*\.pl\) \.*  *skipped: #\2: #p' "$1")
	passed=$((regress_ok + tap_files - tap_bad))
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
		for f in tmp_check_*/log/"regress_log_$t" tmp_check_*/log/"${t}"_*.log; do show "$f" 100; done
	done
	if [ -z "$shown" ]; then
		for f in log/* output_*/log/* tmp_check_*/log/*; do show "$f" 100; done
	fi
	cd - >/dev/null
}

packages() {
	if [ -n "$fast" ]; then
		# shellcheck disable=SC2046 # one word per package
		install_packages $(packages_for "$PG_MAJOR" "${FAST_TEST_PACKAGES[@]}")
	else
		# shellcheck disable=SC2046 # one word per package
		install_packages $(packages_for "$PG_MAJOR" "${TEST_PACKAGES[@]}" "${DEB_PACKAGES[@]}")
	fi
	check_not_packaged
}

build() {
	make -C "$REPO" -s PG_CONFIG="$PG_CONFIG" clean	# so every file gets the flags below
	PG_CFLAGS=$TEST_CFLAGS build_and_install
}

citus() {
	say "Building Citus for PostgreSQL $PG_MAJOR (scripts/build-citus.sh)"
	bash "$REPO/scripts/build-citus.sh" "$citus_tarball" "$PG_CONFIG" || {
		say "Citus did not build for PostgreSQL $PG_MAJOR: t/304_citus.pl will fail"
		return 1
	}
}

# installcheck SUITE MAKE-ARGUMENT...: make in the test copy as the
# non-root user, its output also in the log; a TAP group's tmp_check (each
# prove run empties it) is kept as tmp_check_SUITE.
installcheck() {
	local suite=$1 status=0
	shift
	say "PostgreSQL $PG_MAJOR, $suite: make $*"
	(cd "$copy" && as_pg make PG_CONFIG="$PG_CONFIG" ${TAP_JOBS:+TAP_JOBS="$TAP_JOBS"} "$@") 2>&1 |
		tee -a "$log" || status=$?
	if [ -d "$copy/tmp_check" ] && [[ $suite == tap-* ]]; then
		mv "$copy/tmp_check" "$copy/tmp_check_${suite#tap-}"
	fi
	return "$status"
}

script() {	# script NAME [ARGUMENT]: one of scripts/, for this major
	say "Running scripts/$*"
	PG_MAJOR=$PG_MAJOR PG_CONFIG=$PG_CONFIG bash "$REPO/scripts/$1" "${@:2}"
}

step packages packages
[ "$step_ok" -eq 1 ] || exit 1
{
	printf 'compiler\t%s\n' "$(cc --version | head -n 1)"
	printf 'postgres\t%s\n' "$("$PG_CONFIG" --version)"
} >>"$result"
# Every dependency is installed now, so a TAP test that would skip for a
# missing one fails instead (t/SnowflakeTest.pm): a skip here is a broken
# setup, except for what Debian does not package for this major.
export SNOWFLAKE_REQUIRE_ALL=1
SNOWFLAKE_NOT_PACKAGED=$(not_packaged "$PG_MAJOR" | paste -sd' ' -)
export SNOWFLAKE_NOT_PACKAGED
step build build
[ "$step_ok" -eq 1 ] || exit 1

# Citus, for t/304_citus.pl, where it supports this major.  SNOWFLAKE_CITUS=1
# makes that test fail, rather than skip, if Citus is not installed after all.
unset SNOWFLAKE_CITUS
if [ -z "$fast" ] && [ -n "$citus_tarball" ] && citus_supports "$PG_MAJOR"; then
	step citus citus
	export SNOWFLAKE_CITUS=1
fi

copy=$(owned_tmpdir test)
copy_tree "$REPO" "$copy"
if is_root; then
	chown -R postgres:postgres "$copy"
fi
log=$copy/installcheck.log
say "Running the test suites for PostgreSQL $PG_MAJOR as $(pg_user) in $copy"
step pg_regress installcheck pg_regress installcheck ISOLATION= TAP_TESTS=
step isolation installcheck isolation installcheck REGRESS= TAP_TESTS=
step tap-core installcheck tap-core installcheck REGRESS= ISOLATION=
if [ -z "$fast" ]; then
	step tap-clients installcheck tap-clients installcheck-clients
	step tap-fleet installcheck tap-fleet installcheck-fleet
fi
count_results "$log"

# Beyond the test suites: one version everywhere, and the Debian package
# builds for this major, installs and passes its autopkgtest.  On 15, also
# that the C code is as PostgreSQL 15's pgindent formats it (the later
# suites carry neither its source nor the pg_bsd_indent 2.1.1 it wants), and
# the links between the Markdown files (once is enough).
# Each counts as one test passed or failed.
count_step() {
	if [ "$step_ok" -eq 1 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
}
if [ -z "$fast" ]; then
	step version script check-version.sh
	count_step
	step package script test-deb.sh
	count_step
	if [ "$PG_MAJOR" = 15 ]; then
		step pgindent script pgindent.sh --check
		count_step
		step links script check-links.sh
		count_step
	fi
fi

{
	printf 'passed\t%s\nfailed\t%s\n' "$passed" "$failed"
	printf 'skipped\t%s\n' "$(printf '%s' "$skipped" | paste -sd';' -)"
} >>"$result"

say "PostgreSQL $PG_MAJOR, the steps' times:"
awk -F'\t' '$1 == "step" { printf "    %-12s %3dm%02ds  %s\n", $2, $3 / 60, $3 % 60, $4 }' "$result"
if [ "$failed" -eq 0 ] && [ -z "$failed_steps" ]; then
	rm -rf "$copy"
	if [ -n "$fast" ]; then
		say "PostgreSQL $PG_MAJOR: all passed ($passed): pg_regress and isolation tests, the core TAP scripts"
	else
		say "PostgreSQL $PG_MAJOR: all passed ($passed): pg_regress and isolation tests, TAP scripts, the version check, the package test"
	fi
	exit 0
fi
show_failures "$copy"
say "PostgreSQL $PG_MAJOR: $failed failed (steps:$failed_steps); the test tree is kept in $copy"
exit 1
