#!/usr/bin/env bash
# scripts/test.sh - run the whole test suite: install the Debian packages it
# needs, build with warnings as errors, install the extension, and run
# `make installcheck` (pg_regress, isolation, TAP) as a non-root user in a
# temporary copy of the tree, then the version check and the Debian package
# test. On failure, prints the diffs and logs needed to
# diagnose it and exits non-zero. Safe for CI: no prompts, no stdin needed.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

install_packages "${TEST_PACKAGES[@]}"
# Every dependency is installed now, so a TAP test that would skip for a
# missing one fails instead (t/SnowflakeTest.pm): a skip here is a broken setup.
export SNOWFLAKE_REQUIRE_ALL=1

make -C "$REPO" -s PG_CONFIG="$PG_CONFIG" clean	# so every file gets the flags below
PG_CFLAGS="-Wall -Wextra -Werror -Wno-unused-parameter" build_and_install

COPY=$(owned_tmpdir test)
keep=
trap '[ -n "$keep" ] || rm -rf "$COPY"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
rsync -a --exclude .git --exclude '/tmp_check*' --exclude '/output_*' --exclude /results \
	--exclude /log --exclude '/regression.*' "$REPO/" "$COPY/"	# leftovers of earlier runs
if is_root; then
	chown -R postgres:postgres "$COPY"
fi
cd "$COPY"

say "Running make installcheck as $(pg_user) in $COPY"
LOG=$COPY/installcheck.log
status=0
as_pg make -k PG_CONFIG="$PG_CONFIG" installcheck 2>&1 | tee "$LOG" || status=$?

# Count pg_regress/isolation tests and TAP scripts.
regress_ok=$(grep -cE '^(test |     )[^ ]+ +\.\.\. ok' "$LOG" || true)
regress_bad=$(grep -cE '^(test |     )[^ ]+ +\.\.\. (FAILED|failed)' "$LOG" || true)
tap_files=$(sed -n 's/^Files=\([0-9]*\),.*/\1/p' "$LOG" | tail -n 1)
failed_tap=$(sed -n 's#^t/\([^ ]*\)\.pl  *(Wstat.*#\1#p' "$LOG")
tap_bad=$(printf '%s' "$failed_tap" | grep -c . || true)
passed=$((regress_ok + ${tap_files:-0} - tap_bad))
failed=$((regress_bad + tap_bad))

# Beyond installcheck: one version everywhere, and the Debian package builds,
# installs and works on a fresh cluster.
for check in check-version.sh test-deb.sh; do
	say "Running scripts/$check"
	if bash "$REPO/scripts/$check"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		status=1
	fi
done

if [ "$status" -eq 0 ]; then
	echo
	echo "All passed: pg_regress and isolation tests, TAP scripts, the version check and the package test."
	echo "installcheck: $passed passed, $failed failed"
	exit 0
fi

# What went wrong: each pg_regress run's diffs with the end of its server log
# (pg_regress writes both into its output directory), then the logs of the TAP
# scripts that failed; every log if none of those exist.
shown=
show() {	# show FILE [LINES]: print FILE, or its last LINES lines
	[ -f "$1" ] || return 0
	say "${2:+last $2 lines of }$COPY/$1"
	if [ -n "${2:-}" ]; then tail -n "$2" "$1"; else cat "$1"; fi
	shown=1
}
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

keep=1
echo
echo "installcheck: $passed passed, $failed failed"
echo "FAILED (status $status); the test tree is kept in $COPY"
exit 1
