#!/usr/bin/env bash
# scripts/test-deb.sh - build the postgresql-MAJOR-snowflake package and run
# its autopkgtest (debian/tests) against it, installed on this system.
#
# usage: [PG_MAJOR=MAJOR] scripts/test-deb.sh [DEB]
#
# MAJOR defaults to the one the host's Debian suite packages; scripts/test.sh
# runs this for each major on the host or in its root.  Without DEB, builds
# one first with scripts/build-deb.sh.  Then, as root (or through sudo),
# `autopkgtest DEB SOURCE -- null`: autopkgtest installs the package and the
# tests' dependencies on this system (the "null" testbed: no container; in
# the matrix, the root is the container) and runs debian/tests/control's
# tests from a copy of this tree whose debian/tests/control names MAJOR:
# installcheck (pg_regress and isolation against the packaged files),
# installed-files (the package holds this tree's control file and SQL
# scripts, unchanged) and fresh-cluster (a preloading server, including a
# crash restart that replays the mark's WAL).  The package stays installed:
# its files are what `make install` of this tree puts in the same places.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
use_major "${PG_MAJOR:-$(host_major)}"
export PG_SUPPORTED_VERSIONS=$PG_MAJOR	# pg_buildext: this major alone

# shellcheck disable=SC2046 # one word per package
install_packages $(packages_for "$PG_MAJOR" "${DEB_PACKAGES[@]}")

DEB=${1:-}
if [ -z "$DEB" ]; then
	DEB=$(PG_MAJOR=$PG_MAJOR bash "$REPO/scripts/build-deb.sh" | tail -n 1)
fi
[ -f "$DEB" ] || die "no such package: $DEB"

WORK=$(mktemp -d /tmp/snowflake-testdeb.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
copy_tree "$REPO" "$WORK/src"
(cd "$WORK/src" && pg_buildext updatecontrol)

say "Running the package's autopkgtest: $(basename "$DEB")"
status=0
as_root autopkgtest --output-dir "$WORK/out" "$DEB" "$WORK/src/" -- null || status=$?
# autopkgtest exits 2 when some test was skipped, 4 when one failed, 8 when
# none could run, higher for errors of its own (autopkgtest(1)).
if [ "$status" -ne 0 ]; then
	say "autopkgtest's summary:"
	cat "$WORK/out/summary" 2>/dev/null || true
	die "autopkgtest of $(basename "$DEB") exited with status $status"
fi
say "The package $(basename "$DEB") passes its autopkgtest:"
sed 's/^/    /' "$WORK/out/summary"
